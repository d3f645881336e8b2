// One postgres.js client for both real Postgres and the embedded one.
import postgres, { type Sql, type TransactionSql } from 'postgres'
import { embeddedOwner, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded'

export type { Sql }

/** Rows and property bags as a JSON parameter (bulk statements read them with jsonb_to_recordset). */
export function asJson(value: unknown): postgres.JSONValue {
  return value as postgres.JSONValue
}

/** Repository functions take a Sql; inside sql.begin() they get the transaction, which queries alike. */
export function inTransaction(tx: TransactionSql): Sql {
  return tx as unknown as Sql
}

export interface Database {
  sql: Sql
  /** true when this process runs the embedded PGlite */
  embedded: boolean
  /** LISTEN/NOTIFY reaches other connections (not on PGlite's socket) */
  supportsNotify: boolean
  /** how to reach the database, without credentials, for logs */
  describe: string
  /** the embedded database this process serves: a tar of its directory written to `file` (backups) */
  dumpTo?(file: string): Promise<number>
  close(): Promise<void>
}

export interface DatabaseOptions {
  databaseUrl?: string
  dataDir: string
  poolMax: number
  /** CLI: connect to the embedded database of a running server instead of failing */
  joinRunningServer?: boolean
  /** Postgres cancels any statement running longer (0 = no limit): one request cannot hold a connection for minutes */
  statementTimeoutMs?: number
  /** the embedded database: commits wait for the disk (default true; EMBEDDED_PG_FSYNC) */
  embeddedFsync?: boolean
}

const CLIENT_OPTIONS: postgres.Options<{}> = {
  idle_timeout: 30,
  connect_timeout: 5,
  onnotice: () => undefined,
  // bigint columns come back as JS numbers: ids here stay far below 2^53.
  types: { bigint: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) } },
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'postgres'
  }
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const sql = postgres(options.databaseUrl, {
      ...CLIENT_OPTIONS,
      max: options.poolMax,
      connection: options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {},
    })
    return {
      sql,
      embedded: false,
      supportsNotify: true,
      describe: redactUrl(options.databaseUrl),
      close: () => sql.end({ timeout: 5 }),
    }
  }

  const owner = options.joinRunningServer ? await embeddedOwner(options.dataDir) : null
  let embedded: EmbeddedPostgres | undefined
  let connection: { path: string }
  if (owner) {
    connection = { path: owner.path }
  } else {
    embedded = await startEmbeddedPostgres(options.dataDir, { fsync: options.embeddedFsync })
    connection = embedded.connection
  }
  const sql = postgres({
    ...CLIENT_OPTIONS,
    ...connection,
    user: 'postgres',
    database: 'postgres',
    max: Math.min(options.poolMax, 8),
  } as postgres.Options<{}>)
  return {
    sql,
    embedded: embedded !== undefined,
    supportsNotify: false,
    describe: `embedded PGlite in ${options.dataDir}${owner ? ` (served by process ${owner.pid})` : ''}`,
    ...(embedded ? { dumpTo: (file: string) => embedded.dump(file) } : {}),
    async close() {
      await sql.end({ timeout: 5 })
      await embedded?.stop()
    },
  }
}

/** A unique constraint refused the row (SQLSTATE 23505). */
export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === '23505'
}

/**
 * SQLSTATE classes that say the data is wrong, not that Postgres is unavailable: data exceptions (22: a date
 * out of range, bad text), integrity violations (23) and program limits (54: an index row too large).
 */
const DATA_FAULT_CLASSES = new Set(['22', '23', '54'])

/** Postgres refused the data itself, or the data broke the code that reads it (a stack overflow, a bad type). */
export function isDataFault(error: unknown): boolean {
  if (error instanceof RangeError || error instanceof TypeError) return true
  const e = error as { name?: string; code?: unknown }
  return e?.name === 'PostgresError' && typeof e.code === 'string' && DATA_FAULT_CLASSES.has(e.code.slice(0, 2))
}

/** True when the error means Postgres could not be reached (as opposed to a query error). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string })?.code
  return (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'ETIMEDOUT' ||
    code === 'EPIPE' ||
    code === 'ENOTFOUND' ||
    code === 'CONNECT_TIMEOUT' ||
    code === 'CONNECTION_CLOSED' ||
    code === 'CONNECTION_ENDED' ||
    code === 'CONNECTION_DESTROYED' ||
    code === '57P01' || // admin_shutdown
    code === '57P02' ||
    code === '57P03' || // cannot_connect_now
    code === '08000' ||
    code === '08003' ||
    code === '08006'
  )
}
