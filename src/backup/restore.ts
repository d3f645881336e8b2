// `restore --from DIR` into an empty DATA_DIR: the backup checked, the metadata unpacked (sign-in sessions removed:
// keys keep working, people sign in again), the event store, the log with its checkpoint, dead letters and recordings
// copied. The next start replays the copied log through the normal pipeline (docs/operations.md#backups).
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { dataDirHolder, lockDataDir } from '../db/data-dir-lock'
import { openDatabase } from '../db/postgres'
import { syncTree } from '../lib/fsync'
import { isEmptyOrAbsent, makePrivateDir, MANIFEST, readJson } from './files'
import type { Manifest } from './model'
import { deleteSessions } from './repository'
import { METADATA_FILE } from './service'
import { unpackMetadata, verifyBackup, type VerifyReport } from './verify'

export class RestoreRefused extends Error {
  constructor(
    message: string,
    readonly report?: VerifyReport,
  ) {
    super(message)
  }
}

export interface RestoreResult {
  restored_into: string
  from: string
  created_at: string
  event_store: 'sqlite' | 'duckdb'
  counts: Record<string, number>
  log_records_to_replay: number
  sessions_removed: number
  /** the setting the service must start with to read the restored events */
  start_with: Record<string, string>
}

export async function restoreBackup(from: string, dataDir: string, fsync: boolean): Promise<RestoreResult> {
  const target = resolve(dataDir)
  if (!isEmptyOrAbsent(target)) {
    const entries = readdirSync(target).slice(0, 5)
    throw new RestoreRefused(
      `DATA_DIR ${target} is not empty (${entries.join(', ')}${readdirSync(target).length > 5 ? ', …' : ''}): restore writes only into a new or empty directory, so that nothing there is overwritten or mixed with the backup. Point DATA_DIR at an empty directory (or move this one away) and run restore again.`,
    )
  }
  if ((await dataDirHolder(target)) !== null) throw new RestoreRefused(`DATA_DIR ${target} is in use by a running process`)
  const report = await verifyBackup(from, { openCopies: false })
  if (!report.ok) throw new RestoreRefused(`the backup in ${from} does not verify: ${report.problems.join('; ')}`, report)
  const manifest = readJson(join(from, MANIFEST)) as Manifest

  makePrivateDir(target)
  const unlock = await lockDataDir(target)
  try {
    await unpackMetadata(join(from, METADATA_FILE), join(target, 'pg'))
    const db = await openDatabase({ dataDir: target, poolMax: 1, embeddedFsync: fsync })
    let sessions: number
    try {
      sessions = await deleteSessions(db.sql)
    } finally {
      await db.close()
    }
    for (const file of manifest.files) {
      if (file.path === METADATA_FILE) continue
      const to = join(target, file.path)
      mkdirSync(dirname(to), { recursive: true, mode: 0o700 })
      copyFileSync(join(from, file.path), to)
    }
    if (!existsSync(join(target, 'wal'))) makePrivateDir(join(target, 'wal'))
    syncTree(target)
    return {
      restored_into: target,
      from: resolve(from),
      created_at: manifest.created_at,
      event_store: manifest.stores.events,
      counts: manifest.counts,
      log_records_to_replay: manifest.log.records,
      sessions_removed: sessions,
      start_with: { DATA_DIR: target, EMBEDDED_EVENT_STORE: manifest.stores.events },
    }
  } finally {
    await unlock()
  }
}
