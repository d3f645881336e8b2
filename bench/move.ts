// npm run bench -- move: an embedded install (DuckDB) with BENCH_MOVE_EVENTS events (default 1,000,000, written
// straight into its stopped store, as test/integration/move.test.ts does with fewer) moved into a fresh Postgres and
// ClickHouse by `npm run -s cli -- move`. Prints the whole command's time, the events' part and their rate, and the
// time of a second run (which checks every batch against ClickHouse and writes nothing).
import { join } from 'node:path'
import { sharedClickHouse, sharedPostgres } from '../test/helpers/shared-servers'
import { runCli, spawnService } from '../test/helpers/spawn-service'
import { freshDataDir, PERSONAL_KEY, PROJECT_KEY } from '../test/helpers/stack'
import { addEvents, buildSource, DAY } from '../test/integration/move-fixture'

interface MoveReport {
  ok: boolean
  this_run: { events_read: number; events_written: number; event_seconds: number; events_per_second: number }
}

export async function moveBench(): Promise<string> {
  const events = Number(process.env.BENCH_MOVE_EVENTS ?? 1_000_000)
  const dataDir = await freshDataDir('embedded')
  const service = await spawnService({ DATA_DIR: dataDir, INIT_PROJECT_API_KEY: PROJECT_KEY, INIT_PERSONAL_API_KEY: PERSONAL_KEY, LOG_LEVEL: 'warn' })
  await buildSource(service.url)
  await service.stop()
  await addEvents(join(dataDir, 'events.duckdb'), events, Date.now() - 14 * DAY)
  const ch = await sharedClickHouse()
  const databaseUrl = await (await sharedPostgres()).createDatabase()
  const clickhouseUrl = `${ch.url}/bench_move_${crypto.randomUUID().replace(/-/g, '').slice(0, 8)}`
  const args = ['move', '--database-url', databaseUrl, '--clickhouse-url', clickhouseUrl, '--from', dataDir]
  const run = async () => {
    const t0 = performance.now()
    const r = await runCli(args, { DATA_DIR: dataDir, LOG_LEVEL: 'warn' })
    if (r.code !== 0) throw new Error(`move exited ${r.code}: ${r.stderr.slice(-2000)}`)
    return { seconds: (performance.now() - t0) / 1000, report: JSON.parse(r.stdout) as MoveReport }
  }
  const first = await run()
  const second = await run()
  return [
    `### move (embedded DuckDB → Postgres ${'15'} + ClickHouse ${ch.version}), ${events.toLocaleString('en')} events`,
    `| run | whole command | events part | events/s | written |`,
    `|---|---|---|---|---|`,
    `| first | ${first.seconds.toFixed(1)} s | ${first.report.this_run.event_seconds} s | ${first.report.this_run.events_per_second.toLocaleString('en')} | ${first.report.this_run.events_written.toLocaleString('en')} |`,
    `| again (checks, writes nothing) | ${second.seconds.toFixed(1)} s | ${second.report.this_run.event_seconds} s | ${second.report.this_run.events_per_second.toLocaleString('en')} | ${second.report.this_run.events_written.toLocaleString('en')} |`,
  ].join('\n')
}
