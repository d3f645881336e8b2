// The embedded event store: SQLite (bun:sqlite) in DATA_DIR, for running without ClickHouse.
import { Database, type Statement } from 'bun:sqlite'
import { mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { ReadAnswer, ReadRequest } from './sqlite-reader'
import { StoreError, type EventQuery, type EventStore, type InsertOptions, type StoredEvent } from './store'
import { refuseNewerSchema } from '../db/migrate'

const MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/embedded/', import.meta.url))
// Rows per SQLite transaction; between chunks the event loop gets to serve requests.
const CHUNK = 2000
/**
 * The largest batch the flush worker hands this store (FLUSH_MAX_EVENTS still says when a flush starts): rows go
 * in CHUNK at a time whatever the batch, so a larger one only holds more decoded events in memory (the store
 * writer's and the learner's batches are both in the flush worker's heap).
 */
export const EMBEDDED_MAX_BATCH_EVENTS = 5000
/**
 * SQLite's page cache, per connection, in KiB. Pages it misses come from the kernel's page cache, which is not
 * the process's memory: a flush-only replay of 3.3 M events ran as fast with 8 MiB as with 32 MiB.
 */
const PAGE_CACHE_KIB = 8192

interface Row {
  uuid: string
  team_id: number
  event: string
  distinct_id: string
  properties: string
  timestamp: number
  created_at: number
  person_id: string | null
}

function fromRow(r: Row): StoredEvent {
  return {
    uuid: r.uuid,
    teamId: r.team_id,
    event: r.event,
    distinctId: r.distinct_id,
    properties: r.properties,
    timestamp: r.timestamp,
    createdAt: r.created_at,
    personId: r.person_id,
  }
}

function classify(error: unknown): StoreError {
  const code = String((error as { code?: string })?.code ?? '')
  // Constraint violations (including a trigger's RAISE) are about the rows; everything else may pass.
  const permanent = code.startsWith('SQLITE_CONSTRAINT') || code.startsWith('SQLITE_MISMATCH') || code === 'SQLITE_TOOBIG'
  return new StoreError(`embedded store: ${(error as Error)?.message ?? error}`, !permanent, error)
}

const READER = new URL('./sqlite-reader.ts', import.meta.url)

/** Read queries on a worker thread with its own read-only connection (see sqlite-reader.ts). */
class OffThreadReader {
  private readonly worker: Worker
  private next = 0
  private readonly waiting = new Map<number, { resolve(rows: unknown[]): void; reject(error: Error): void }>()

  constructor(file: string) {
    this.worker = new Worker(READER.href)
    this.worker.postMessage({ file })
    this.worker.onmessage = (event: MessageEvent<ReadAnswer>) => {
      const answer = event.data
      const waiter = this.waiting.get(answer.id)
      this.waiting.delete(answer.id)
      if ('rows' in answer) waiter?.resolve(answer.rows)
      else waiter?.reject(Object.assign(new Error(answer.error), { code: answer.code }))
    }
    this.worker.unref()
  }

  all(sql: string, params: (string | number)[]): Promise<unknown[]> {
    const id = ++this.next
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject })
      this.worker.postMessage({ id, sql, params } satisfies ReadRequest)
    })
  }

  close(): void {
    this.worker.terminate()
    for (const waiter of this.waiting.values()) waiter.reject(new Error('embedded store closed'))
    this.waiting.clear()
  }
}

export class EmbeddedEventStore implements EventStore {
  readonly kind = 'embedded' as const
  readonly timestampPrecisionMs = 1
  private db: Database | undefined
  private insert: Statement | undefined
  private reader: OffThreadReader | undefined

  /** `readOffThread`: run query() on a worker thread (the server's request side); writers do not need it. */
  constructor(
    private readonly file: string,
    private readonly options: { readOffThread?: boolean } = {},
  ) {}

  async init(): Promise<void> {
    if (this.file !== ':memory:') mkdirSync(dirname(this.file), { recursive: true })
    const db = new Database(this.file, { create: true })
    db.run('PRAGMA journal_mode = WAL')
    db.run('PRAGMA synchronous = FULL')
    db.run('PRAGMA busy_timeout = 5000')
    db.run(`PRAGMA cache_size = -${PAGE_CACHE_KIB}`)
    db.run('CREATE TABLE IF NOT EXISTS schema_migrations (version TEXT PRIMARY KEY, applied_at INTEGER NOT NULL)')
    const done = new Set((db.query('SELECT version FROM schema_migrations').all() as { version: string }[]).map((r) => r.version))
    const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort()
    refuseNewerSchema('embedded event store (SQLite)', done, files.map((f) => f.replace(/\.sql$/, '')))
    for (const file of files) {
      const version = file.replace(/\.sql$/, '')
      if (done.has(version)) continue
      db.transaction(() => {
        db.exec(readFileSync(`${MIGRATIONS_DIR}/${file}`, 'utf8'))
        db.run('INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)', [version, Date.now()])
      })()
    }
    this.insert = db.prepare(
      'INSERT OR IGNORE INTO events (uuid, team_id, event, distinct_id, properties, timestamp, created_at, person_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    )
    this.db = db
  }

  /** The read thread, started by the first query (a process that only ingests never pays for it: ≈ 8 MB). */
  private offThreadReader(): OffThreadReader | undefined {
    if (!this.options.readOffThread || this.file === ':memory:' || !this.db) return undefined
    this.reader ??= new OffThreadReader(this.file)
    return this.reader
  }

  /** The SQLite handle, for tests that need to shape the store (e.g. a trigger that rejects rows). */
  get handle(): Database {
    if (!this.db) throw new StoreError('embedded store is closed', true)
    return this.db
  }

  // INSERT OR IGNORE on (team_id, uuid) makes every insert idempotent, so inDoubt needs no extra work.
  async insertBatch(rows: StoredEvent[], _options: InsertOptions): Promise<number> {
    const db = this.handle
    const insert = this.insert!
    const writeChunk = db.transaction((chunk: StoredEvent[]) => {
      let written = 0
      for (const e of chunk) {
        written += insert.run(e.uuid, e.teamId, e.event, e.distinctId, e.properties, e.timestamp, e.createdAt, e.personId).changes
      }
      return written
    })
    let written = 0
    for (let i = 0; i < rows.length; i += CHUNK) {
      try {
        written += writeChunk(rows.slice(i, i + CHUNK)) as number
      } catch (error) {
        throw classify(error)
      }
      if (i + CHUNK < rows.length) await new Promise((r) => setImmediate(r))
    }
    return written
  }

  /** The events API's filter, cursor and limit as a WHERE … LIMIT clause and its parameters. */
  private filterOf(q: EventQuery): [string, (string | number)[]] {
    const where = ['team_id = ?']
    const params: (string | number)[] = [q.teamId]
    if (q.event !== undefined) where.push('event = ?'), params.push(q.event)
    if (q.distinctId !== undefined) where.push('distinct_id = ?'), params.push(q.distinctId)
    if (q.after !== undefined) where.push('timestamp >= ?'), params.push(q.after)
    if (q.before !== undefined) where.push('timestamp < ?'), params.push(q.before)
    if (q.cursor) {
      where.push('(timestamp < ? OR (timestamp = ? AND uuid < ?))')
      params.push(q.cursor.timestamp, q.cursor.timestamp, q.cursor.uuid)
    }
    params.push(q.limit)
    return [`WHERE ${where.join(' AND ')} ORDER BY timestamp DESC, uuid DESC LIMIT ?`, params]
  }

  private async read<T>(sql: string, params: (string | number)[]): Promise<T[]> {
    try {
      const reader = this.offThreadReader()
      return (reader ? await reader.all(sql, params) : this.handle.query(sql).all(...params)) as T[]
    } catch (error) {
      throw classify(error)
    }
  }

  async query(q: EventQuery): Promise<StoredEvent[]> {
    const [filter, params] = this.filterOf(q)
    const rows = await this.read<Row>(`SELECT uuid, team_id, event, distinct_id, properties, timestamp, created_at, person_id FROM events ${filter}`, params)
    return rows.map(fromRow)
  }

  async rowSizes(q: EventQuery): Promise<number[]> {
    const [filter, params] = this.filterOf(q)
    const rows = await this.read<{ size: number }>(`SELECT length(CAST(event AS BLOB)) + length(CAST(distinct_id AS BLOB)) + length(CAST(properties AS BLOB)) AS size FROM events ${filter}`, params)
    return rows.map((r) => r.size)
  }

  async countByUuid(teamId: number, uuids: string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>()
    for (let i = 0; i < uuids.length; i += 500) {
      const chunk = uuids.slice(i, i + 500)
      const rows = this.handle
        .query(`SELECT uuid, count(*) AS n FROM events WHERE team_id = ? AND uuid IN (${chunk.map(() => '?').join(',')}) GROUP BY uuid`)
        .all(teamId, ...chunk) as { uuid: string; n: number }[]
      for (const r of rows) counts.set(r.uuid, r.n)
    }
    return counts
  }

  /** By rows, a few thousand at a time, yielding between them: a person with many events never stalls the thread. */
  async deleteEvents(teamId: number, distinctIds: string[]): Promise<void> {
    for (let i = 0; i < distinctIds.length; i += 500) {
      const ids = distinctIds.slice(i, i + 500)
      const remove = this.handle.prepare(
        `DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE team_id = ? AND distinct_id IN (${ids.map(() => '?').join(',')}) LIMIT ${CHUNK})`,
      )
      try {
        while (remove.run(teamId, ...ids).changes > 0) await new Promise((r) => setImmediate(r))
      } catch (error) {
        throw classify(error)
      } finally {
        remove.finalize()
      }
    }
  }

  async health(): Promise<boolean> {
    try {
      this.handle.query('SELECT 1').get()
      return true
    } catch {
      return false
    }
  }

  async close(): Promise<void> {
    this.reader?.close()
    this.reader = undefined
    this.insert?.finalize()
    this.db?.close()
    this.db = undefined
  }
}
