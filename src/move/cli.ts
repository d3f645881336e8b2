// The CLI's `move --database-url URL --clickhouse-url URL [--from DATA_DIR]`: checks its arguments, runs the move
// with progress on stderr, prints the report; exit 1 (the report printed) when a count does not match.
import { resolve } from 'node:path'
import type { Config } from '../config'
import { DataDirBusy } from '../db/data-dir-lock'
import { ReportedFailure } from '../backup/cli'
import { TargetInService } from './marker'
import { runMove } from './run'
import { MoveRefused } from './source'

export const MOVE_USAGE = `  move --database-url URL --clickhouse-url URL [--from DATA_DIR]
                                                      copy the embedded stores of a stopped install (DATA_DIR by
                                                      default) into Postgres and ClickHouse; run again to resume or
                                                      check; prints the counts and the settings to start with`

/** null when `group` is not `move`. */
export async function moveCommand(
  group: string,
  values: { 'database-url'?: string; 'clickhouse-url'?: string; from?: string },
  config: Config,
  usage: (message: string) => Error,
): Promise<unknown> {
  if (group !== 'move') return null
  const databaseUrl = values['database-url']
  const clickhouseUrl = values['clickhouse-url']
  if (!databaseUrl || !/^postgres(ql)?:\/\//.test(databaseUrl)) throw usage('move needs --database-url postgres://… (the Postgres to move into)')
  if (!clickhouseUrl || !/^https?:\/\//.test(clickhouseUrl)) throw usage('move needs --clickhouse-url http://…/DATABASE (the ClickHouse to move into)')
  try {
    new URL(clickhouseUrl)
    new URL(databaseUrl)
  } catch {
    throw usage('--database-url and --clickhouse-url must be URLs')
  }
  const from = resolve(values.from ?? config.DATA_DIR)
  try {
    const report = await runMove({
      from,
      databaseUrl,
      clickhouseUrl,
      clickhouseCluster: config.CLICKHOUSE_CLUSTER,
      segmentBytes: config.WAL_SEGMENT_BYTES,
      fsync: config.EMBEDDED_PG_FSYNC,
      say: (line) => process.stderr.write(`${line}\n`),
    })
    if (!report.ok) throw new ReportedFailure(report)
    process.stderr.write(`move: done. Start phog with:\n  DATABASE_URL=${databaseUrl}\n  CLICKHOUSE_URL=${clickhouseUrl}\n`)
    return report
  } catch (error) {
    if (error instanceof MoveRefused || error instanceof DataDirBusy || error instanceof TargetInService) throw usage(error.message)
    throw error
  }
}
