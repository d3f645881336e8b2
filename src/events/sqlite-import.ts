// The first start on DuckDB (EMBEDDED_EVENT_STORE=duckdb) of an install whose events are in SQLite
// (DATA_DIR/events.sqlite): its events are copied into DuckDB in the background, a chunk at a time in rowid order,
// the progress kept in DuckDB's sqlite_import table (resumed after a restart, the first chunk then in doubt so that
// nothing is copied twice), logged as it goes, and marked finished once. The SQLite file is left as it was.
// Then the person mapping SQLite held (copied from Postgres with the same versions, so the mapping copy of
// src/query/person-mapping.ts carries on from it; an upsert keeps the higher version, so copying it again is harmless).
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import type { Logger } from '../log'
import type { DuckDbAccess } from './duckdb-database'
import type { StoredEvent } from './store'

const CHUNK = 5000
const PROGRESS_LOG_MS = 10_000

export interface ImportOutcome {
  copied: number
  finished: boolean
}

export class SqliteEventsImport {
  private stopped = false
  private running: Promise<ImportOutcome> | undefined

  constructor(
    private readonly sqliteFile: string,
    private readonly duck: DuckDbAccess,
    private readonly log: Logger,
    private readonly options: { chunk?: number } = {},
  ) {}

  /** Copy what is left (nothing when there is no SQLite file or the copy finished before). */
  start(): Promise<ImportOutcome> {
    this.running ??= this.copy().catch((error) => {
      this.log.error({ err: error }, `copying the SQLite events into DuckDB failed (resumed at the next start): ${(error as Error)?.message ?? error}`)
      return { copied: 0, finished: false }
    })
    return this.running
  }

  async stop(): Promise<void> {
    this.stopped = true
    await this.running
  }

  private async copy(): Promise<ImportOutcome> {
    if (!existsSync(this.sqliteFile)) return { copied: 0, finished: true }
    const [progress] = await this.duck.all('SELECT last_rowid, copied, finished_at FROM sqlite_import WHERE source = ?', [this.sqliteFile])
    if (progress?.[2] !== null && progress?.[2] !== undefined) return { copied: 0, finished: true }
    let lastRowid = Number(progress?.[0] ?? 0)
    let copied = Number(progress?.[1] ?? 0)
    const sqlite = new Database(this.sqliteFile, { readonly: true })
    try {
      const hasEvents = sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'events'").get()
      const total = hasEvents ? Number((sqlite.query('SELECT count(*) AS n FROM events WHERE rowid > ?').get(lastRowid) as { n: number }).n) + copied : 0
      this.log.info({ source: this.sqliteFile, total, copied }, `copying ${total} events from SQLite into DuckDB (in the background; ${copied} copied before)`)
      const read = hasEvents
        ? sqlite.prepare('SELECT rowid, uuid, team_id, event, distinct_id, properties, timestamp, created_at, person_id FROM events WHERE rowid > ? ORDER BY rowid LIMIT ?')
        : undefined
      // a restart may have come between a chunk's insert and its progress row: that chunk again, in doubt
      let inDoubt = copied > 0 || lastRowid > 0
      let logged = Date.now()
      while (read && !this.stopped) {
        const rows = read.all(lastRowid, this.options.chunk ?? CHUNK) as { rowid: number; uuid: string; team_id: number; event: string; distinct_id: string; properties: string; timestamp: number; created_at: number; person_id: string | null }[]
        if (rows.length === 0) break
        const events: StoredEvent[] = rows.map((r) => ({
          uuid: r.uuid, teamId: r.team_id, event: r.event, distinctId: r.distinct_id, properties: r.properties,
          timestamp: r.timestamp, createdAt: r.created_at, personId: r.person_id,
        }))
        await this.duck.insertEvents(events, inDoubt)
        copied += rows.length // (in doubt, some were there already: copied all the same)
        inDoubt = false
        lastRowid = rows[rows.length - 1].rowid
        await this.saveProgress(lastRowid, copied, null)
        if (Date.now() - logged >= PROGRESS_LOG_MS) {
          logged = Date.now()
          this.log.info({ copied, total }, `copying SQLite events into DuckDB: ${copied} of ${total}`)
        }
        await new Promise((r) => setImmediate(r)) // the SQLite reads are synchronous: let requests in between chunks
      }
      if (this.stopped) return { copied, finished: false }
      await this.copyMapping(sqlite)
      if (this.stopped) return { copied, finished: false }
      await this.saveProgress(lastRowid, copied, Date.now())
      this.log.info({ copied, source: this.sqliteFile }, `copied ${copied} events from SQLite into DuckDB; ${this.sqliteFile} is no longer read and may be removed`)
      return { copied, finished: true }
    } finally {
      sqlite.close()
    }
  }

  private async copyMapping(sqlite: Database): Promise<void> {
    if (!sqlite.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'person_distinct_id'").get()) return
    const read = sqlite.prepare('SELECT team_id, distinct_id, person_id, version FROM person_distinct_id WHERE (team_id, distinct_id) > (?, ?) ORDER BY team_id, distinct_id LIMIT ?')
    let after: [number, string] = [-1, '']
    while (!this.stopped) {
      const rows = read.all(after[0], after[1], this.options.chunk ?? CHUNK) as { team_id: number; distinct_id: string; person_id: string | null; version: number }[]
      if (rows.length === 0) return
      await this.duck.upsertMapping(rows.map((r) => ({ teamId: r.team_id, distinctId: r.distinct_id, personId: r.person_id, version: r.version })))
      const last = rows[rows.length - 1]
      after = [last.team_id, last.distinct_id]
      await new Promise((r) => setImmediate(r))
    }
  }

  private saveProgress(lastRowid: number, copied: number, finishedAt: number | null): Promise<number> {
    return this.duck.write(
      `INSERT INTO sqlite_import VALUES (?, ?, ?, ?) ON CONFLICT (source) DO UPDATE SET last_rowid = excluded.last_rowid, copied = excluded.copied, finished_at = excluded.finished_at`,
      [this.sqliteFile, lastRowid, copied, finishedAt],
    )
  }
}

/** At boot on DuckDB: start the copy when an events.sqlite is there; the answer stops it (at shutdown). */
export function startSqliteImport(sqliteFile: string, duck: DuckDbAccess, log: Logger): () => Promise<void> {
  if (!existsSync(sqliteFile)) return async () => undefined
  const copy = new SqliteEventsImport(sqliteFile, duck, log)
  void copy.start()
  return () => copy.stop()
}
