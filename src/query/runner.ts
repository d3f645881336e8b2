// What a query runner is: the store-independent contract the query service relies on (src/query/*-runner.ts).
import type { CompiledQuery } from './compile'
import { Params, type DialectName } from './dialect'

/**
 * The store could not run the statement: `kind` says whose fault. `query`: the statement's (its message is
 * phog's own, never the store's text); `too_large`: not even one row fits the answer's byte budget; `timeout`;
 * `client_closed`: the client went away first; `unavailable`: the store's.
 */
export class QueryRunError extends Error {
  constructor(
    message: string,
    readonly kind: 'query' | 'too_large' | 'timeout' | 'client_closed' | 'unavailable',
    override readonly cause?: unknown,
  ) {
    super(message)
  }
}

export interface RunOptions {
  /** the project whose query this is: slots are shared fairly between projects */
  teamId: number
  timeoutMs: number
  /** the client's request: when it ends, the statement is stopped */
  signal?: AbortSignal
  /** rows past this many bytes (as read from the store) are not read: the answer says `truncated` */
  maxBytes?: number
}

export interface RunResult {
  rows: unknown[][]
  /** rows were left unread because the answer reached its byte budget */
  truncated: boolean
}

export interface QueryRunner {
  /** the dialect to compile for (ClickHouse's is known after its version is read) */
  dialect(): Promise<DialectName>
  readonly database?: string
  /**
   * Fails with a QueryRunError; or, where the store refuses for its own sake and says when to retry (the embedded
   * DuckDB store short of memory: 503 store_busy), with the ApiError that is the client's answer as it stands.
   */
  run(query: CompiledQuery, options: RunOptions): Promise<RunResult>
  /** the person each of these distinct ids belongs to now (ids with none are absent) */
  personIds(teamId: number, distinctIds: string[]): Promise<Map<string, string>>
  /** statements running and waiting for a slot now (for /metrics) */
  slotUse(): { running: number; waiting: number }
  close(): Promise<void>
}

/** A statement of a runner's own (not from a user's text), in the shape run() takes. */
export function ownStatement(sql: string, params: Params, columns: number): CompiledQuery {
  return { sql, params, columns: Array(columns).fill(''), types: [], limit: 0, offset: 0 }
}

/** The budget of a runner's own small statements (the person mapping of an events page). */
export const OWN_STATEMENT_BYTES = 16 * 1024 * 1024

/** The persons of these distinct ids now, from an embedded store's mapping table (ids with none are absent). */
export async function mappedPersonIds(runner: QueryRunner, dialect: DialectName, teamId: number, distinctIds: string[]): Promise<Map<string, string>> {
  if (distinctIds.length === 0) return new Map()
  const params = new Params(dialect)
  const list = distinctIds.map((id) => params.string(id)).join(', ')
  const { rows } = await runner.run(
    ownStatement(`SELECT distinct_id, person_id FROM person_distinct_id WHERE team_id = ${Math.trunc(teamId)} AND distinct_id IN (${list}) AND person_id IS NOT NULL`, params, 2),
    { teamId, timeoutMs: 10_000 },
  )
  return new Map(rows.map(([d, p]) => [String(d), String(p)]))
}
