// The embedded DuckDB database (DATA_DIR/events.duckdb): one owner per process. DuckDB lets one process open a file
// read-write, and within a process each thread that opens it gets an instance of its own that does not see the
// others' writes (checked with DuckDBInstance.fromCache under Bun: two instances, two views of one file). So the
// main thread owns the one instance; the flush worker thread reaches it over a BroadcastChannel (remote below).
// DuckDB computes on its own threads: a statement never blocks the event loop, and connection.interrupt() stops it.
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isMainThread } from 'node:worker_threads'
import type { StoredEvent } from './store'

const MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/duckdb/', import.meta.url))
/** how long the flush worker waits for the main thread's answer before it takes the store for down (and retries) */
const REMOTE_TIMEOUT_MS = 60_000
/**
 * Rows appended between two turns of the event loop: the appender is synchronous, on the thread that serves
 * requests. (Handing DuckDB the batch as JSON text to parse instead measured worse: the flush starved under load.)
 */
const APPEND_TURN_ROWS = 500

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** One distinct id's person, as the person mapping copies it here (src/query/person-mapping.ts). */
export interface MappingRow {
  teamId: number
  distinctId: string
  /** null: the id belongs to nobody now (its person was erased) */
  personId: string | null
  version: number
}

export interface DuckDbSettings {
  /** DuckDB's memory_limit, MiB */
  memoryMb: number
  threads: number
}

export type SqlValue = string | number | boolean | null

/** What the event store and the person mapping need of the database, on the owner's thread or from another. */
export interface DuckDbAccess {
  /** rows as arrays of plain values (integers as numbers, or text past 2^53) */
  all(sql: string, params?: SqlValue[]): Promise<unknown[][]>
  /** a write, serialized with the others; returns the rows it changed */
  write(sql: string, params?: SqlValue[]): Promise<number>
  /** insert events in one transaction; in doubt, uuids already stored in the batch's time range are skipped */
  insertEvents(rows: StoredEvent[], inDoubt: boolean): Promise<number>
  /** upsert distinct id → person rows; a row is replaced only by a higher version */
  upsertMapping(rows: MappingRow[]): Promise<void>
  release(): Promise<void>
}

/** A DuckDB value as JavaScript: bigints as numbers while exact, decimals as numbers, the rest as text. */
export function plainValue(value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (typeof value === 'bigint') return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString()
  if (typeof value === 'object') {
    const decimal = value as { toDouble?: () => number }
    return typeof decimal.toDouble === 'function' ? decimal.toDouble() : String(value)
  }
  return value
}

const plainRows = (rows: DuckDBValue[][]): unknown[][] => rows.map((row) => row.map(plainValue))

/** The owner: the instance, one connection for writes (serialized), a connection per read. */
export class DuckDbDatabase {
  private writes: Promise<unknown> = Promise.resolve()
  private channel: BroadcastChannel | undefined

  private constructor(
    readonly file: string,
    readonly instance: DuckDBInstance,
    private readonly writer: DuckDBConnection,
  ) {}

  static async open(file: string, settings: DuckDbSettings): Promise<DuckDbDatabase> {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    const instance = await DuckDBInstance.create(file, {
      memory_limit: `${settings.memoryMb}MB`,
      threads: String(settings.threads),
      // no extension is ever downloaded or loaded from outside the package (json is built in)
      autoinstall_known_extensions: 'false',
      autoload_known_extensions: 'false',
    })
    if (file !== ':memory:') for (const f of [file, `${file}.wal`]) if (existsSync(f)) chmodSync(f, 0o600)
    const writer = await instance.connect()
    const db = new DuckDbDatabase(file, instance, writer)
    await db.migrate()
    await writer.run('CREATE TEMP TABLE IF NOT EXISTS staged_events AS SELECT * FROM events LIMIT 0')
    await writer.run('CREATE TEMP TABLE IF NOT EXISTS staged_mapping AS SELECT * FROM person_distinct_id LIMIT 0')
    return db
  }

  private async migrate(): Promise<void> {
    const c = this.writer
    await c.run('CREATE TABLE IF NOT EXISTS schema_migrations (version VARCHAR PRIMARY KEY, applied_at BIGINT NOT NULL)')
    const done = new Set((await c.runAndReadAll('SELECT version FROM schema_migrations')).getRows().map((r) => String(r[0])))
    for (const name of readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort()) {
      const version = name.replace(/\.sql$/, '')
      if (done.has(version)) continue
      await c.run('BEGIN TRANSACTION')
      try {
        await c.run(readFileSync(`${MIGRATIONS_DIR}/${name}`, 'utf8'))
        await c.run('INSERT INTO schema_migrations VALUES (?, ?)', [version, Date.now()])
        await c.run('COMMIT')
      } catch (error) {
        await c.run('ROLLBACK').catch(() => undefined)
        throw error
      }
    }
  }

  /** One write at a time on the writer connection (its temp tables are the staging area). */
  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.writes.then(work, work)
    this.writes = next.catch(() => undefined)
    return next
  }

  async all(sql: string, params: SqlValue[] = []): Promise<unknown[][]> {
    const c = await this.instance.connect()
    try {
      return plainRows((await c.runAndReadAll(sql, params)).getRows())
    } finally {
      c.closeSync()
    }
  }

  write(sql: string, params: SqlValue[] = []): Promise<number> {
    return this.serial(async () => (await this.writer.run(sql, params)).rowsChanged)
  }

  insertEvents(rows: StoredEvent[], inDoubt: boolean): Promise<number> {
    if (rows.length === 0) return Promise.resolve(0)
    return this.serial(async () => {
      const c = this.writer
      await c.run('DELETE FROM staged_events')
      const appender = await c.createAppender('staged_events', 'main', 'temp')
      let lo = Infinity
      let hi = -Infinity
      try {
        for (const [i, e] of rows.entries()) {
          if (i > 0 && i % APPEND_TURN_ROWS === 0) await nextTurn()
          appender.appendVarchar(e.uuid)
          appender.appendBigInt(BigInt(e.teamId))
          appender.appendVarchar(e.event)
          appender.appendVarchar(e.distinctId)
          appender.appendVarchar(e.properties)
          appender.appendBigInt(BigInt(Math.trunc(e.timestamp)))
          appender.appendBigInt(BigInt(Math.trunc(e.createdAt)))
          if (e.personId === null) appender.appendNull()
          else appender.appendVarchar(e.personId)
          appender.endRow()
          lo = Math.min(lo, e.timestamp)
          hi = Math.max(hi, e.timestamp)
        }
        appender.flushSync()
      } finally {
        appender.closeSync()
      }
      // One statement: it lands whole or not at all (a commit is in DuckDB's WAL, synced, before it returns).
      // In doubt, what an earlier attempt stored is skipped: a replayed event has the same uuid and timestamp, so the
      // look-up reads only the batch's time range.
      const sql = inDoubt
        ? `INSERT INTO events SELECT DISTINCT ON (s.team_id, s.uuid) s.* FROM staged_events s
            WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.timestamp BETWEEN ${Math.trunc(lo)} AND ${Math.trunc(hi)} AND e.team_id = s.team_id AND e.uuid = s.uuid)`
        : 'INSERT INTO events SELECT * FROM staged_events'
      return (await c.run(sql)).rowsChanged
    })
  }

  upsertMapping(rows: MappingRow[]): Promise<void> {
    // one row per key, the highest version (DuckDB refuses to update a row twice in one statement)
    const latest = new Map<string, MappingRow>()
    for (const r of rows) {
      const key = `${r.teamId}\u0000${r.distinctId}`
      const known = latest.get(key)
      if (!known || r.version > known.version) latest.set(key, r)
    }
    if (latest.size === 0) return Promise.resolve()
    return this.serial(async () => {
      const c = this.writer
      await c.run('DELETE FROM staged_mapping')
      const appender = await c.createAppender('staged_mapping', 'main', 'temp')
      try {
        let i = 0
        for (const r of latest.values()) {
          if (i++ > 0 && i % APPEND_TURN_ROWS === 0) await nextTurn()
          appender.appendBigInt(BigInt(r.teamId))
          appender.appendVarchar(r.distinctId)
          if (r.personId === null) appender.appendNull()
          else appender.appendVarchar(r.personId)
          appender.appendBigInt(BigInt(r.version))
          appender.endRow()
        }
        appender.flushSync()
      } finally {
        appender.closeSync()
      }
      await c.run(
        `INSERT INTO person_distinct_id SELECT * FROM staged_mapping
         ON CONFLICT (team_id, distinct_id) DO UPDATE SET person_id = excluded.person_id, version = excluded.version
         WHERE excluded.version > person_distinct_id.version`,
      )
    })
  }

  /** Answer the other threads of this process (the flush worker) on the file's channel. */
  serve(): void {
    if (this.channel) return
    const channel = new BroadcastChannel(channelName(this.file))
    channel.onmessage = async (event) => {
      const m = event.data as RemoteMessage
      if (m.kind !== 'request') return
      try {
        const result = await this.perform(m.op, m.args)
        channel.postMessage({ kind: 'answer', id: m.id, to: m.from, result } satisfies RemoteMessage)
      } catch (error) {
        channel.postMessage({ kind: 'answer', id: m.id, to: m.from, error: (error as Error)?.message ?? String(error) } satisfies RemoteMessage)
      }
    }
    this.channel = channel
  }

  private perform(op: RemoteOp, args: unknown[]): Promise<unknown> {
    switch (op) {
      case 'all':
        return this.all(args[0] as string, args[1] as SqlValue[])
      case 'write':
        return this.write(args[0] as string, args[1] as SqlValue[])
      case 'insertEvents':
        return this.insertEvents(args[0] as StoredEvent[], args[1] as boolean)
      case 'upsertMapping':
        return this.upsertMapping(args[0] as MappingRow[])
    }
  }

  async close(): Promise<void> {
    this.channel?.close()
    this.channel = undefined
    await this.writes.catch(() => undefined)
    this.writer.closeSync()
    // a checkpoint folds the WAL into the file: the next start has nothing to replay
    this.instance.closeSync()
  }
}

type RemoteOp = 'all' | 'write' | 'insertEvents' | 'upsertMapping'
type RemoteMessage =
  | { kind: 'request'; id: number; from: string; op: RemoteOp; args: unknown[] }
  | { kind: 'answer'; id: number; to: string; result?: unknown; error?: string }

const channelName = (file: string) => `phog-duckdb:${file}`

/** This thread's open databases, shared by the event store, the query runner and the person mapping. */
const opened = new Map<string, { db: Promise<DuckDbDatabase>; users: number }>()

/** The owner of `file` on the main thread (opened by the first user, closed by the last). */
export async function ownDuckDb(file: string, settings: DuckDbSettings): Promise<{ db: DuckDbDatabase; release(): Promise<void> }> {
  let entry = opened.get(file)
  if (!entry) {
    const db = DuckDbDatabase.open(file, settings).then((d) => (d.serve(), d))
    entry = { db, users: 0 }
    opened.set(file, entry)
    db.catch(() => opened.get(file) === entry && opened.delete(file))
  }
  entry.users++
  const db = await entry.db.catch((error) => {
    entry.users--
    throw error
  })
  let released = false
  return {
    db,
    release: async () => {
      if (released) return
      released = true
      if (--entry.users > 0) return
      opened.delete(file)
      await db.close()
    },
  }
}

/** The database from this thread: its owner on the main thread, else requests to the main thread's owner. */
export async function accessDuckDb(file: string, settings: DuckDbSettings): Promise<DuckDbAccess> {
  if (isMainThread) {
    const { db, release } = await ownDuckDb(file, settings)
    return {
      all: (sql, params) => db.all(sql, params),
      write: (sql, params) => db.write(sql, params),
      insertEvents: (rows, inDoubt) => db.insertEvents(rows, inDoubt),
      upsertMapping: (rows) => db.upsertMapping(rows),
      release,
    }
  }
  return new RemoteDuckDb(file)
}

/** A thread that is not the owner's: each call is a request on the file's channel, answered by the owner. */
class RemoteDuckDb implements DuckDbAccess {
  private readonly channel: BroadcastChannel
  private readonly self = `${process.pid}:${Math.random().toString(36).slice(2)}`
  private next = 0
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }>()

  constructor(file: string) {
    this.channel = new BroadcastChannel(channelName(file))
    this.channel.onmessage = (event) => {
      const m = event.data as RemoteMessage
      if (m.kind !== 'answer' || m.to !== this.self) return
      const waiter = this.waiting.get(m.id)
      if (!waiter) return
      this.waiting.delete(m.id)
      clearTimeout(waiter.timer)
      if (m.error !== undefined) waiter.reject(new Error(m.error))
      else waiter.resolve(m.result)
    }
  }

  private call<T>(op: RemoteOp, args: unknown[]): Promise<T> {
    const id = ++this.next
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id)
        reject(new Error(`the embedded DuckDB store did not answer within ${REMOTE_TIMEOUT_MS} ms`))
      }, REMOTE_TIMEOUT_MS)
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject, timer })
      this.channel.postMessage({ kind: 'request', id, from: this.self, op, args } satisfies RemoteMessage)
    })
  }

  all(sql: string, params: SqlValue[] = []) {
    return this.call<unknown[][]>('all', [sql, params])
  }
  write(sql: string, params: SqlValue[] = []) {
    return this.call<number>('write', [sql, params])
  }
  insertEvents(rows: StoredEvent[], inDoubt: boolean) {
    return this.call<number>('insertEvents', [rows, inDoubt])
  }
  upsertMapping(rows: MappingRow[]) {
    return this.call<void>('upsertMapping', [rows])
  }
  async release(): Promise<void> {
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer)
      w.reject(new Error('embedded store closed'))
    }
    this.waiting.clear()
    this.channel.close()
  }
}
