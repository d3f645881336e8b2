// The source of a move: the embedded stores of a DATA_DIR no service runs on. The move takes the directory's lock
// for its whole run (a service started meanwhile waits, or is refused), and refuses while the write-ahead log holds
// records not every consumer has written yet: those are not in the stores the move reads. A service stopped with
// SIGTERM writes them before it exits; one that was killed writes them at its next start.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { dataDirHolder, lockDataDir } from '../db/data-dir-lock'
import { migratePostgres } from '../db/migrate'
import { openDatabase, type Database } from '../db/postgres'
import { LEARNER } from '../people/learner'
import { Checkpoint } from '../pipeline/checkpoint'
import { STORE_WRITER } from '../pipeline/store-writer'
import { WriteAheadLog } from '../pipeline/wal'
import { RECORDING_WRITER } from '../replay/writer'
import { DuckDbEventReader, SqliteEventReader, type EmbeddedEventReader } from './event-source'

/** The consumers of an embedded service's log (store_history exists only on ClickHouse). */
const EMBEDDED_CONSUMERS = [STORE_WRITER, LEARNER, RECORDING_WRITER]

export class MoveRefused extends Error {}

export interface MoveSource {
  dataDir: string
  metadata: Database
  events: EmbeddedEventReader | null
  recordingsFile: string
  close(): Promise<void>
}

/** Records of the log some consumer has not finished (0 when the log is drained). */
export function unfinishedLogRecords(dataDir: string, segmentBytes: number): number {
  const dir = join(dataDir, 'wal')
  if (!existsSync(dir)) return 0
  const wal = WriteAheadLog.open({ dir, segmentBytes, fsyncIntervalMs: 1000 })
  try {
    const segments = wal.snapshot().filter((s) => s.size > 0)
    if (segments.length === 0) return 0
    const lastSeq = Math.max(...segments.map((s) => s.lastSeq))
    const firstSeq = Math.min(...segments.map((s) => s.firstSeq))
    const checkpoint = existsSync(join(dir, 'checkpoint')) ? Checkpoint.read(join(dir, 'checkpoint')) : { done: {} as Record<string, number> }
    // a consumer the checkpoint names that this list does not (one added later) counts too
    const consumers = new Set([...EMBEDDED_CONSUMERS, ...Object.keys(checkpoint.done)])
    const finished = Math.min(...[...consumers].map((c) => checkpoint.done[c] ?? 0))
    return Math.max(0, lastSeq - Math.max(finished, firstSeq - 1))
  } finally {
    void wal.close()
  }
}

export async function openMoveSource(dataDir: string, options: { segmentBytes: number; fsync: boolean }): Promise<MoveSource> {
  if (!existsSync(join(dataDir, 'pg'))) throw new MoveRefused(`${dataDir} holds no embedded metadata store (no pg/ directory): --from must name the DATA_DIR of an embedded install`)
  const holder = await dataDirHolder(dataDir)
  if (holder !== null) {
    throw new MoveRefused(
      `a service (pid ${holder}) runs on ${dataDir}: stop it first (SIGTERM: it writes its log's last events to the stores as it stops), then run move again. ` +
        'The move reads a stopped install so that nothing captured after the copy is left behind on the old stores.',
    )
  }
  const unlock = await lockDataDir(dataDir)
  const closers: (() => Promise<void>)[] = [unlock]
  const close = async () => {
    for (const c of closers.reverse()) await c().catch(() => undefined)
  }
  try {
    const pending = unfinishedLogRecords(dataDir, options.segmentBytes)
    if (pending > 0) {
      throw new MoveRefused(
        `the write-ahead log in ${join(dataDir, 'wal')} holds ${pending} records not yet written to the embedded stores (the service was killed, or its stop timed out): ` +
          'start the service on this DATA_DIR, let it catch up (GET /_ready answers 200), stop it with SIGTERM, then run move again',
      )
    }
    const metadata = await openDatabase({ dataDir, poolMax: 2, embeddedFsync: options.fsync })
    closers.push(() => metadata.close())
    await migratePostgres(metadata.sql) // the same schema as the target's
    const events = await openEventReader(dataDir)
    if (events) closers.push(() => events.close())
    return { dataDir, metadata, events, recordingsFile: join(dataDir, 'recordings.sqlite'), close }
  } catch (error) {
    await close()
    throw error
  }
}

/** DuckDB's file when there is one (the default store), else SQLite's; none when no event was ever stored. */
async function openEventReader(dataDir: string): Promise<EmbeddedEventReader | null> {
  const duckFile = join(dataDir, 'events.duckdb')
  const sqliteFile = join(dataDir, 'events.sqlite')
  if (existsSync(duckFile)) {
    const duck = await DuckDbEventReader.open(duckFile)
    if (existsSync(sqliteFile) && !(await duck.sqliteImportFinished().catch(() => true))) {
      await duck.close()
      throw new MoveRefused(
        `${dataDir} holds events in both events.sqlite and events.duckdb, and the copy from SQLite into DuckDB has not finished: ` +
          'start the service (EMBEDDED_EVENT_STORE=duckdb) until its log says the copy is done, stop it, then run move again',
      )
    }
    return duck
  }
  if (existsSync(sqliteFile)) return new SqliteEventReader(sqliteFile)
  return null
}
