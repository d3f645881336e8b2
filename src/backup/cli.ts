// The CLI's backup, verify and restore. `backup` asks the running service (its control socket) when one holds
// DATA_DIR, and otherwise takes DATA_DIR itself for the time of the copy.
import { resolve } from 'node:path'
import type { Config } from '../config'
import { dataDirHolder } from '../db/data-dir-lock'
import { askServiceForBackup } from './control'
import type { Manifest } from './model'
import { restoreBackup } from './restore'
import { backupWithoutService, embeddedOnly } from './sources'
import { verifyBackup } from './verify'

/** A command that ends in a report and a failure: the report on stdout, exit 1. */
export class ReportedFailure extends Error {
  constructor(readonly report: unknown) {
    super('reported failure')
  }
}

function summary(path: string, manifest: Manifest, via: string) {
  return {
    path,
    via,
    created_at: manifest.created_at,
    finished_at: manifest.finished_at,
    stores: manifest.stores,
    counts: manifest.counts,
    log: manifest.log,
    files: manifest.files.length,
    bytes: manifest.files.reduce((sum, f) => sum + f.bytes, 0),
  }
}

/** null when `group` is not one of these commands. */
export async function backupCommand(group: string, values: { to?: string; from?: string }, config: Config, usage: (message: string) => Error): Promise<unknown> {
  if (group === 'backup') {
    if (!values.to) throw usage('backup needs --to DIR (a new or empty directory)')
    if (!embeddedOnly(config)) {
      throw usage('backup copies the embedded stores; with DATABASE_URL or CLICKHOUSE_URL back up Postgres (pg_dump) and ClickHouse (BACKUP, clickhouse-backup) with their tools: see docs/operations.md#backups')
    }
    const to = resolve(values.to)
    const holder = await dataDirHolder(config.DATA_DIR)
    if (holder !== null) {
      const answer = await askServiceForBackup(config.DATA_DIR, to)
      if (answer === null) throw new Error(`DATA_DIR is held by process ${holder}, which answers no backup request (an older phog?): stop it, or upgrade it`)
      const body = answer.body as { path: string; manifest: Manifest; detail?: string }
      if (answer.status !== 200) throw new Error(`the service refused the backup (${answer.status}): ${body?.detail ?? 'no detail'}`)
      return summary(body.path, body.manifest, `the running service (pid ${holder})`)
    }
    const { path, manifest } = await backupWithoutService(config, to)
    return summary(path, manifest, 'this command (no service running)')
  }
  if (group === 'verify') {
    if (!values.from) throw usage('verify needs --from DIR')
    const report = await verifyBackup(resolve(values.from))
    if (!report.ok) throw new ReportedFailure(report)
    return report
  }
  if (group === 'restore') {
    if (!values.from) throw usage('restore needs --from DIR')
    return restoreBackup(resolve(values.from), config.DATA_DIR, config.EMBEDDED_PG_FSYNC)
  }
  return null
}
