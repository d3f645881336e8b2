// What a backup reads, in the running service and in the CLI when no service runs (it then owns DATA_DIR itself).
import { join } from 'node:path'
import type { Config } from '../config'
import { lockDataDir } from '../db/data-dir-lock'
import { openDatabase, type Database } from '../db/postgres'
import { duckDbFile, duckDbSettings, sqliteFile } from '../events/factory'
import type { CaptureLog } from '../pipeline/capture-log'
import { WriteAheadLog } from '../pipeline/wal'
import { copyDuckDb, copySqlite } from './event-copy'
import { BackupService, type BackupSources } from './service'

/** Whether this configuration keeps everything in DATA_DIR (the only one `backup` copies itself). */
export function embeddedOnly(config: Config): boolean {
  return !config.DATABASE_URL && !config.CLICKHOUSE_URL
}

function eventCopier(config: Config): BackupSources['copyEvents'] {
  return config.EMBEDDED_EVENT_STORE === 'duckdb'
    ? (file) => copyDuckDb(duckDbFile(config), duckDbSettings(config), file)
    : (file) => copySqlite(sqliteFile(config), file, true)
}

/** The running service's stores: its PGlite thread dumps, its event store copies, its log holds its segments. */
export function serviceSources(config: Config, db: Database, captureLog: CaptureLog): BackupSources | null {
  if (!embeddedOnly(config) || !db.dumpTo) return null
  const dump = db.dumpTo
  return {
    dataDir: config.DATA_DIR,
    eventStore: config.EMBEDDED_EVENT_STORE,
    sql: db.sql,
    dumpMetadata: (file) => dump(file),
    copyEvents: eventCopier(config),
    holdLog: () => captureLog.holdSegments(),
    logSegments: () => captureLog.wal.snapshot(),
  }
}

/** No service runs: take DATA_DIR (a service started meanwhile waits for it), back it up, give it back. */
export async function backupWithoutService(config: Config, to: string) {
  const unlock = await lockDataDir(config.DATA_DIR)
  let db: Database | undefined
  let wal: WriteAheadLog | undefined
  try {
    db = await openDatabase({ dataDir: config.DATA_DIR, poolMax: 2, embeddedFsync: config.EMBEDDED_PG_FSYNC })
    const log = WriteAheadLog.open({ dir: join(config.DATA_DIR, 'wal'), segmentBytes: config.WAL_SEGMENT_BYTES, fsyncIntervalMs: 1000 })
    wal = log
    const dump = db.dumpTo!
    const service = new BackupService({
      dataDir: config.DATA_DIR,
      eventStore: config.EMBEDDED_EVENT_STORE,
      sql: db.sql,
      dumpMetadata: (file) => dump(file),
      copyEvents: eventCopier(config),
      holdLog: () => () => undefined, // nothing consumes the log while this process holds DATA_DIR
      logSegments: () => log.snapshot(),
    })
    return await service.run(to)
  } finally {
    await wal?.close()
    await db?.close()
    await unlock()
  }
}
