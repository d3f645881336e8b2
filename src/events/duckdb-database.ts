// The embedded DuckDB database (DATA_DIR/events.duckdb): the one instance of a process, on a thread of its own
// (duckdb-owner.ts). DuckDB lets one process open a file read-write, and within a process each thread that opens it
// gets an instance of its own that does not see the others' writes (checked with DuckDBInstance.fromCache under Bun:
// two instances, two views of one file). So one thread owns the instance and every other thread asks it
// (duckdb-access.ts): the thread that serves requests never runs an appender, and DuckDB computes on its own threads,
// so a statement never blocks an event loop; connection.interrupt() stops it.
import { DuckDBInstance, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { StatementRefused, StatementTurns, type Turn } from './duckdb-turns'
import type { StoredEvent } from './store'
import { refuseNewerSchema } from '../db/migrate'

const MIGRATIONS_DIR = fileURLToPath(new URL('../../sql/duckdb/', import.meta.url))
/**
 * Rows appended between two turns of the owner's event loop (the appender is synchronous): requests for reads wait
 * at most that long behind a large batch. (Handing DuckDB the batch as JSON text to parse instead measured worse.)
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
  /** what DuckDB may spill beside its file (max_temp_directory_size), MiB; its own default is 90 % of the disk */
  spillMb?: number
  /**
   * the owner thread's niceness (ANALYTICS_THREAD_NICE): its own work (rows read into JavaScript, a chunk at a time)
   * is mostly analytics. DuckDB computes on Bun's pool threads, shared with the rest of the process: left as they are.
   */
  nice?: number
}

/** The spill budget when the caller names none (tests, the CLI): the configuration's default. */
const DEFAULT_SPILL_MB = 4096

export type SqlValue = string | number | boolean | null

/** What the event store and the person mapping need of the database, on the owner's thread or from another. */
/** Where a backup's copy of the DuckDB file is written before it is moved into the backup (src/backup/). */
export const duckDbBackupDir = (file: string) => `${file}.backup`

export interface DuckDbAccess {
  /** rows as arrays of plain values (integers as numbers, or text past 2^53) */
  all(sql: string, params?: SqlValue[]): Promise<unknown[][]>
  /** a write, serialized with the others; returns the rows it changed */
  write(sql: string, params?: SqlValue[]): Promise<number>
  /** insert events in one transaction; in doubt, uuids already stored in the batch's time range are skipped */
  insertEvents(rows: StoredEvent[], inDoubt: boolean): Promise<number>
  /** upsert distinct id → person rows; a row is replaced only by a higher version */
  upsertMapping(rows: MappingRow[]): Promise<void>
  /**
   * A query API statement, read a chunk at a time until its rows pass `maxBytes` (then `truncated`); `interrupt(id)`
   * stops it (DuckDB then fails it with an INTERRUPT error), waiting for its turn or running. Refused or failed for
   * the store's sake, the error says why in `failure` (duckdb-turns.ts).
   */
  stream(id: number, sql: string, params: SqlValue[], maxBytes: number, timeoutMs?: number, turn?: TurnOptions): Promise<StreamedRows>
  interrupt(id: number): Promise<void>
  release(): Promise<void>
}

export interface StreamedRows {
  rows: unknown[][]
  truncated: boolean
}

/** How a query API statement takes its turn (duckdb-turns.ts). */
export interface TurnOptions {
  /** run with no other statement beside it (it ran short of memory beside others) */
  alone?: boolean
  /** the longest wait for the turn before the statement is refused as busy (none: until it is interrupted) */
  waitMs?: number
}

const OUT_OF_MEMORY = /^Out of Memory Error/i
/** DuckDB's checkpoint_threshold (its default): the commit that takes the log past it checkpoints */
const CHECKPOINT_LOG_BYTES = 16 * 1024 * 1024
/** a write short of memory: a statement's error, or the appender's ("Failed to append: failed to allocate …") */
const WRITE_SHORT_OF_MEMORY = /^Out of Memory Error|(could not|failed to) (allocate|pin) /i
const interrupted = () => new Error('INTERRUPT Error: Interrupted!')

/** About what a batch adds to DuckDB's log: its texts, and the fixed columns (uuid, numbers) of each row. */
function logBytesOf(rows: StoredEvent[]): number {
  let n = 0
  for (const r of rows) n += 64 + r.event.length + r.distinctId.length + r.properties.length
  return n
}

/** A row's size as the query API counts it on the embedded stores: a text's length, 8 for anything else. */
export function rowBytes(row: unknown[]): number {
  let n = 2
  for (const value of row) n += typeof value === 'string' ? value.length + 3 : 8
  return n
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

/** A query API statement waiting for its turn or running. */
interface Streaming {
  connection: DuckDBConnection | null
  /** it has its turn (it may hold memory) */
  started: boolean
  interrupted: boolean
  /** stopped so that a write short of memory could have it: refused as busy, the client retries */
  yielded: boolean
  stop: AbortController
  done: Promise<void>
}

const messageOf = (error: unknown) => (error as Error)?.message ?? ''

/** The owner: the instance, one connection for writes (serialized), a connection per read. */
/** How long closing waits for interrupted statements to end (DuckDB stops between chunks of work). */
const CLOSE_WAIT_MS = 20_000

export class DuckDbDatabase {
  private writes: Promise<unknown> = Promise.resolve()
  /** query API statements waiting or running, by their caller's key, for interrupt() (one before it connected: noted) */
  private readonly streaming = new Map<string, Streaming>()
  /** the query API statements' turns, whichever thread sent them: the memory they share is the instance's */
  private readonly turns = new StatementTurns()
  /** the other reads running, so that closing waits for them too */
  private readonly reads = new Set<{ connection: DuckDBConnection | null; done: Promise<void> }>()
  private closing = false

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
      // SQL reaches no file or URL but the database's own (no read_csv, COPY, ATTACH, INSTALL), and no statement may
      // change these settings afterwards: the query API's compiler refuses such SQL, this is the second wall
      allow_community_extensions: 'false',
      // spilled pages go beside the file (DuckDB's default, `<file>.tmp`; naming it counts as external access),
      // within a budget (DuckDB's own is 90 % of the free disk)
      max_temp_directory_size: `${settings.spillMb ?? DEFAULT_SPILL_MB}MB`,
    })
    // ... but a backup's copy (src/backup/event-copy.ts) is attached in a directory of its own beside the file; the
    // list can only be given by SET, before external access is shut and the configuration locked
    const setup = await instance.connect()
    try {
      if (file !== ':memory:') await setup.run(`SET allowed_directories = ['${duckDbBackupDir(file).replaceAll("'", "''")}/']`)
      await setup.run('SET enable_external_access = false')
      await setup.run('SET lock_configuration = true')
    } finally {
      setup.closeSync()
    }
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
    const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort()
    refuseNewerSchema('embedded event store (DuckDB)', done, files.map((f) => f.replace(/\.sql$/, '')))
    for (const name of files) {
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
  private serial<T>(work: () => Promise<T>, logBytes = 0): Promise<T> {
    if (this.closing) return Promise.reject(new Error('embedded store closed'))
    const first = () => this.writeFirst(work, logBytes)
    const next = this.writes.then(first, first)
    this.writes = next.catch(() => undefined)
    return next
  }

  /**
   * Writes come before the query API's statements: a write that ran short of memory beside them stops them (they
   * answer 503, the client retries) and runs again at once, no new statement starting meanwhile. Each write is one
   * statement or starts by clearing its staging table, so a failed one left nothing and runs again whole.
   */
  private async writeFirst<T>(work: () => Promise<T>, logBytes: number): Promise<T> {
    this.turns.writeStarted()
    try {
      // DuckDB checkpoints on the commit that takes its log past 16 MB, and a checkpoint short of memory invalidates
      // the whole database until a restart: the write that may be that commit has the memory to itself
      if (this.logSize() + logBytes >= CHECKPOINT_LOG_BYTES) return await this.withMemory(work)
      try {
        return await work()
      } catch (error) {
        if (!WRITE_SHORT_OF_MEMORY.test(messageOf(error))) throw error
        return await this.withMemory(work)
      }
    } finally {
      this.turns.writeEnded()
    }
  }

  /** `work` with the memory to itself: no statement starts meanwhile, those running are stopped (503, retried). */
  private async withMemory<T>(work: () => Promise<T>): Promise<T> {
    const neighbours = [...this.streaming.values()].filter((r) => r.started)
    if (neighbours.length === 0) return work()
    this.turns.hold()
    try {
      for (const r of neighbours) {
        r.yielded = true
        this.stopStatement(r)
      }
      await Promise.all(neighbours.map((r) => r.done))
      return await work()
    } finally {
      this.turns.release()
    }
  }

  /** The size of DuckDB's log beside the file (0 in memory). */
  private logSize(): number {
    if (this.file === ':memory:') return 0
    return statSync(`${this.file}.wal`, { throwIfNoEntry: false })?.size ?? 0
  }

  async all(sql: string, params: SqlValue[] = []): Promise<unknown[][]> {
    if (this.closing) throw new Error('embedded store closed')
    const finished = Promise.withResolvers<void>()
    const read = { connection: null as DuckDBConnection | null, done: finished.promise }
    this.reads.add(read)
    try {
      const c = (read.connection = await this.instance.connect())
      try {
        return plainRows((await c.runAndReadAll(sql, params)).getRows())
      } finally {
        c.closeSync()
      }
    } finally {
      this.reads.delete(read)
      finished.resolve()
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
    }, logBytesOf(rows))
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

  /** `id` is the caller's, unique among its calls (`key` names the caller: ids of two callers may meet). */
  async stream(key: string, sql: string, params: SqlValue[], maxBytes: number, options: TurnOptions = {}): Promise<StreamedRows> {
    if (this.closing) throw new Error('embedded store closed')
    const finished = Promise.withResolvers<void>()
    const running: Streaming = { connection: null, started: false, interrupted: false, yielded: false, stop: new AbortController(), done: finished.promise }
    this.streaming.set(key, running)
    let connection: DuckDBConnection | undefined
    let turn: Turn | undefined
    try {
      turn = await this.turns.take(options.alone ?? false, options.waitMs, running.stop.signal)
      running.started = true
      connection = running.connection = await this.instance.connect()
      if (running.interrupted) throw interrupted()
      const rows: unknown[][] = []
      let bytes = 0
      const result = await connection.stream(sql, params)
      for (;;) {
        const chunk = await result.fetchChunk()
        if (!chunk || chunk.rowCount === 0) return { rows, truncated: false }
        for (const raw of chunk.getRows()) {
          const row = raw.map(plainValue)
          bytes += rowBytes(row)
          if (bytes > maxBytes) return { rows, truncated: true }
          rows.push(row)
        }
      }
    } catch (error) {
      if (running.yielded) throw new StatementRefused('stopped so that a write of events could have the memory', 'busy')
      // short of memory beside other statements or a write: perhaps theirs, not this one's (the caller runs it alone)
      const message = messageOf(error)
      if (turn?.beside && !running.interrupted && OUT_OF_MEMORY.test(message)) throw new StatementRefused(message, 'short_beside')
      throw error
    } finally {
      this.streaming.delete(key)
      connection?.closeSync()
      // its memory is given back with its connection: only then may a statement waiting to run alone start
      if (turn) this.turns.end(turn)
      finished.resolve()
    }
  }

  interrupt(key: string): void {
    const running = this.streaming.get(key)
    if (running) this.stopStatement(running)
  }

  private stopStatement(running: Streaming): void {
    running.interrupted = true
    running.stop.abort(interrupted())
    running.connection?.interrupt()
  }

  async close(): Promise<void> {
    this.closing = true
    const running = [...this.streaming.values()]
    for (const r of running) this.stopStatement(r)
    const reads = [...this.reads]
    for (const r of reads) r.connection?.interrupt()
    // DuckDB hears an interrupt between chunks of work: a statement still running when the database closed under it
    // (a query API statement, or any other read) finished into a closed database, and its native callback aborted
    // the whole process
    await Promise.race([Promise.all([...running, ...reads].map((r) => r.done)), Bun.sleep(CLOSE_WAIT_MS)])
    await this.writes.catch(() => undefined)
    this.writer.closeSync()
    // a checkpoint folds the WAL into the file: the next start has nothing to replay
    this.instance.closeSync()
  }
}
