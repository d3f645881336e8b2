// What a store's error means for a query API client, in phog's words: the store's own text (positions, internal
// names, its echo of the statement) never reaches the answer; it stays on the error as its cause.
import type { StatementFailure } from '../events/duckdb-turns'
import { ApiError } from '../http/errors'
import { QueryRunError } from './runner'

// ClickHouse error codes whose meaning a client can act on.
const CLICKHOUSE_QUERY_ERRORS: Record<string, string> = {
  '6': 'a text value could not be read as the type asked for',
  '38': 'a text value is not a date',
  '41': 'a text value is not a date and time',
  '69': 'an argument is out of the range a function accepts',
  '70': 'a value cannot be converted to the type asked for',
  '72': 'a text value is not a number',
  '43': 'a function was given a value of a type it does not take',
  '53': 'values of incompatible types are compared or combined',
  '386': 'values of incompatible types are compared or combined',
  '131': 'a text value is too long',
  '153': 'division by zero',
  '184': 'an aggregate function is used inside another aggregate function',
  '215': 'a column is neither in GROUP BY nor inside an aggregate function',
  '241': 'the query needs more memory than a query may use (QUERY_MAX_MEMORY): narrow it (a shorter time range, fewer groups)',
  '158': 'the query reads more rows than a query may read',
  '307': 'the query reads more bytes than a query may read',
}
// The server (or the cluster) is in trouble, not the query: retry later.
const CLICKHOUSE_UNAVAILABLE = new Set(['60', '81', '202', '209', '210', '225', '242', '279', '999', '1000'])
const CLICKHOUSE_TIMEOUT = new Set(['159', '160'])
const CLICKHOUSE_CANCELLED = '394'
const CLICKHOUSE_RESULT_TOO_LARGE = '396'

/** The ClickHouse error code of an error ('' for none: a network error, an aborted request…). */
export function clickhouseErrorCode(error: unknown): string {
  const code = String((error as { code?: string | number })?.code ?? '')
  if (/^\d+$/.test(code)) return code
  // 18.16 words its errors "Code: 395, e.displayText() = …"; current servers "Code: 395. DB::Exception: …"
  return /(?:^|\s)Code: (\d+)[.,]/.exec((error as Error)?.message ?? '')?.[1] ?? ''
}

export const resultTooLarge = (maxBytes: number) =>
  new QueryRunError(`The answer is larger than ${maxBytes} bytes (QUERY_MAX_RESULT_BYTES) even for its first row: select fewer or smaller columns`, 'too_large')

export const timedOut = (timeoutMs: number, cause?: unknown) =>
  new QueryRunError(`The query ran longer than ${timeoutMs} ms (QUERY_TIMEOUT_MS) and was cancelled`, 'timeout', cause)

export const clientClosed = (cause?: unknown) => new QueryRunError('The client went away before the query answered', 'client_closed', cause)

/** A ClickHouse error (or a network failure) as a QueryRunError. */
export function clickhouseRunError(error: unknown, options: { timeoutMs: number; maxBytes: number }): QueryRunError {
  if (error instanceof QueryRunError) return error
  const code = clickhouseErrorCode(error)
  if (!code) return new QueryRunError('ClickHouse is not reachable', 'unavailable', error)
  if (CLICKHOUSE_TIMEOUT.has(code) || code === CLICKHOUSE_CANCELLED) return timedOut(options.timeoutMs, error)
  if (code === CLICKHOUSE_RESULT_TOO_LARGE) return Object.assign(resultTooLarge(options.maxBytes), { cause: error })
  if (CLICKHOUSE_UNAVAILABLE.has(code)) return new QueryRunError(`ClickHouse could not run queries (error ${code})`, 'unavailable', error)
  const known = CLICKHOUSE_QUERY_ERRORS[code]
  return new QueryRunError(known ? `The query failed: ${known}` : `query failed: ClickHouse error ${code}`, 'query', error)
}

// SQLite's messages that a client can act on (matched on the message: SQLite's codes are coarse).
const SQLITE_QUERY_ERRORS: [RegExp, string][] = [
  [/misuse of aggregate|aggregate functions are not allowed/i, 'an aggregate function is used where it cannot be (inside another aggregate, or in WHERE)'],
  [/integer overflow/i, 'a number is out of range'],
  [/string or blob too big|SQLITE_TOOBIG/i, 'a text value is too long'],
  [/expression tree is too large|parser stack overflow|too many terms/i, 'the query is too complex'],
  [/out of memory|SQLITE_NOMEM/i, 'the query needs more memory than a query may use'],
]

/** An embedded store's error (code and message from the query process) as a QueryRunError. */
export function sqliteRunError(message: string, code: string): QueryRunError {
  const cause = new Error(message)
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') || code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_IOERR')) {
    return new QueryRunError(`The embedded event store could not be read (${code})`, 'unavailable', cause)
  }
  for (const [pattern, said] of SQLITE_QUERY_ERRORS) if (pattern.test(message) || pattern.test(code)) return new QueryRunError(`The query failed: ${said}`, 'query', cause)
  return new QueryRunError(`query failed: ${code || 'SQLITE_ERROR'}`, 'query', cause)
}

// DuckDB's messages start with their class ("Binder Error: …"): these are the statement's, the rest the store's.
const DUCKDB_QUERY_ERRORS: [RegExp, string][] = [
  // only ever seen here for a statement that ran alone: one short beside others is run again alone first
  [/^Out of Memory Error/i, 'the query needs more memory than the embedded store has (EMBEDDED_DUCKDB_MEMORY_MB), even with no other query running: narrow it (a shorter time range, fewer groups)'],
  [/^(Out of Range Error|Overflow)/i, 'a number is out of range'],
  [/^Conversion Error/i, 'a value cannot be converted to the type asked for'],
  [/aggregate function calls cannot be nested|aggregates? (are|is) not allowed/i, 'an aggregate function is used where it cannot be (inside another aggregate, or in WHERE)'],
  [/must appear in the GROUP BY clause/i, 'a column is neither in GROUP BY nor inside an aggregate function'],
  [/^(Binder|Parser|Invalid Input|Catalog|Not implemented) Error/i, 'values of incompatible types are compared or combined, or a function was given a value it does not take'],
]
const DUCKDB_UNAVAILABLE = /^(IO|Connection|Fatal|Internal|Transaction|Invalid) Error/i

/** Why the embedded DuckDB store refused or failed a statement for its own sake (duckdb-turns.ts), if it did. */
export function duckdbFailure(error: unknown): StatementFailure | undefined {
  return (error as { failure?: StatementFailure })?.failure
}

/**
 * The embedded DuckDB store is short of memory for the statements running now: the query was not run, or not to
 * its end, through no fault of its own. A 503 the client retries, as it stands (no runner kind maps to it).
 */
export const storeBusy = (cause?: unknown) =>
  Object.assign(
    new ApiError(503, 'server_error', 'store_busy', 'The embedded event store is short of memory for the queries running now (EMBEDDED_DUCKDB_MEMORY_MB); the query did not fail. Please retry shortly.', null, {
      'retry-after': '1',
    }),
    { cause },
  )

/** An embedded DuckDB error as a QueryRunError (its text stays the cause). */
export function duckdbRunError(error: unknown): QueryRunError {
  if (error instanceof QueryRunError) return error
  const message = (error as Error)?.message ?? String(error)
  for (const [pattern, said] of DUCKDB_QUERY_ERRORS) if (pattern.test(message)) return new QueryRunError(`The query failed: ${said}`, 'query', error)
  if (DUCKDB_UNAVAILABLE.test(message)) return new QueryRunError('The embedded event store could not be read', 'unavailable', error)
  return new QueryRunError('query failed: the embedded store refused the statement', 'query', error)
}
