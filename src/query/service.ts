// A HogQL query of one project: parsed, checked, compiled for the store, run with a time limit, and its rows put in
// the same shape whatever the store (times as ISO 8601 UTC, numbers as numbers, properties as sent).
import { ApiError, errors } from '../http/errors'
import { parseClickHouseDateTime } from '../events/dialect'
import type { Metrics } from '../ops/metrics'
import type { CompiledQuery, ValueType } from './compile'
import { compiledQuery, compileHere, type CompileThread } from './compile-thread'
import { QueryRunError, type QueryRunner } from './runner'
import { isEmbedded } from './dialect'

export interface QueryAnswer {
  results: unknown[][]
  columns: string[]
  types: string[]
  hasMore: boolean
  limit: number
  offset: number
}

const TYPE_NAMES: Record<ValueType, string> = {
  String: 'String',
  Int: 'Int64',
  Float: 'Float64',
  Bool: 'Bool',
  DateTime: 'DateTime',
  Date: 'Date',
  JSON: 'JSON',
  UUID: 'UUID',
  Null: 'Nullable(Nothing)',
  Interval: 'Interval',
}

export interface QueryServiceOptions {
  /** QUERY_TIMEOUT_MS: compilation, the wait for a slot and the run together */
  timeoutMs: number
  /** QUERY_MAX_RESULT_BYTES: rows past it are not read (hasMore) */
  maxResultBytes: number
  metrics?: Pick<Metrics, 'queryRequests' | 'queryCompileRefused' | 'queryCompileSeconds'>
  /** where queries are compiled (none: on the caller's thread) */
  compiler?: CompileThread
}

type Outcome = 'ok' | 'truncated' | 'too_large' | 'invalid' | 'timeout' | 'client_closed' | 'unavailable' | 'busy'

const OUTCOME_OF_CODE: Record<string, Outcome> = {
  invalid_query: 'invalid',
  query_result_too_large: 'too_large',
  query_timeout: 'timeout',
  client_closed: 'client_closed',
  event_store_unavailable: 'unavailable',
  store_busy: 'busy',
}

export class QueryService {
  constructor(
    private readonly runner: QueryRunner,
    private readonly options: QueryServiceOptions,
  ) {}

  async run(teamId: number, text: string, signal?: AbortSignal): Promise<QueryAnswer> {
    try {
      const answer = await this.answer(teamId, text, signal)
      this.options.metrics?.queryRequests.inc({ outcome: answer.truncated ? 'truncated' : 'ok' })
      return answer.body
    } catch (error) {
      const refused = runError(error)
      this.options.metrics?.queryRequests.inc({ outcome: OUTCOME_OF_CODE[refused.code] ?? 'invalid' })
      throw refused
    }
  }

  private async answer(teamId: number, text: string, signal?: AbortSignal): Promise<{ body: QueryAnswer; truncated: boolean }> {
    // compiling, the wait for a slot and the run share QUERY_TIMEOUT_MS
    const deadline = performance.now() + this.options.timeoutMs
    const { compiled, dialect } = await this.compile(teamId, text, deadline)
    const { rows, truncated } = await this.runner.run(compiled, {
      teamId,
      timeoutMs: Math.max(1, Math.floor(deadline - performance.now())),
      signal,
      maxBytes: this.options.maxResultBytes,
    })
    const hasMore = truncated || rows.length > compiled.limit
    if (rows.length > compiled.limit) rows.length = compiled.limit
    const msTimes = isEmbedded(dialect)
    const body = {
      results: rows.map((row) => row.map((value, i) => normalize(value, compiled.types[i], msTimes))),
      columns: compiled.columns,
      types: compiled.types.map((t) => TYPE_NAMES[t]),
      hasMore,
      limit: compiled.limit,
      offset: compiled.offset,
    }
    return { body, truncated }
  }

  /**
   * Parsed and compiled within the limits of docs/query.md, on the compiler's own thread when there is one (the
   * server's), so that not even the first large query holds the thread that answers capture and /decide.
   */
  private async compile(teamId: number, text: string, deadline: number): Promise<{ compiled: CompiledQuery; dialect: Awaited<ReturnType<QueryRunner['dialect']>> }> {
    const { metrics, compiler } = this.options
    const dialect = await this.runner.dialect() // ClickHouse's is read from the server: it may be unreachable (503)
    const request = { text, target: { dialect, teamId, database: this.runner.database, now: Date.now() }, deadline: Date.now() + (deadline - performance.now()) }
    const answer = compiler ? await compiler.compile(request) : compileHere(request)
    metrics?.queryCompileSeconds.observe(answer.ms / 1000)
    if ('compiled' in answer) return { compiled: compiledQuery(dialect, answer.compiled), dialect }
    if ('failed' in answer) throw Object.assign(new Error(`Compiling a query failed: ${answer.failed.message}`), { stack: answer.failed.stack })
    if (answer.refused === 'deadline') {
      metrics?.queryCompileRefused.inc({ limit: 'time' })
      throw new ApiError(504, 'server_error', 'query_timeout', `${answer.message} (${this.options.timeoutMs} ms)`)
    }
    if (answer.limit) metrics?.queryCompileRefused.inc({ limit: answer.limit })
    throw errors.validation('invalid_query', answer.message, 'query')
  }

  /** The person each distinct id belongs to now (for the events API's person_id). */
  personIds(teamId: number, distinctIds: string[]): Promise<Map<string, string>> {
    return this.runner.personIds(teamId, distinctIds)
  }

  /** statements running and waiting for a slot (for /metrics) */
  slotUse(): { running: number; waiting: number } {
    return this.runner.slotUse()
  }
}

/** What the client is answered when a query is not run or fails: phog's words, the store's kept as the cause. */
function runError(error: unknown): ApiError {
  if (error instanceof ApiError) return error
  if (!(error instanceof QueryRunError)) throw error
  switch (error.kind) {
    case 'query':
      return Object.assign(errors.validation('invalid_query', error.message, 'query'), { cause: error })
    case 'too_large':
      return new ApiError(413, 'client_error', 'query_result_too_large', error.message, 'query')
    case 'timeout':
      return new ApiError(504, 'server_error', 'query_timeout', error.message)
    case 'client_closed':
      // nobody reads this answer: 499 (not a 5xx, so not an error line; the access line says it at debug)
      return new ApiError(499, 'client_error', 'client_closed', error.message)
    default:
      return Object.assign(errors.unavailable('event_store_unavailable', 'The event store is not reachable. Please retry shortly.'), { cause: error })
  }
}

/** One value as the API answers it, the same from every store. */
/** `msTimes`: the store answers times as epoch milliseconds (the embedded stores). */
export function normalize(value: unknown, type: ValueType, msTimes: boolean): unknown {
  if (value === null || value === undefined) return null
  switch (type) {
    case 'Int':
    case 'Float': {
      const n = Number(value)
      return Number.isFinite(n) ? n : null
    }
    case 'Bool':
      return value === true || value === 1 || value === '1' || value === 'true'
    case 'DateTime':
    case 'Date': {
      const ms = msTimes ? Number(value) : typeof value === 'number' ? value * 1000 : parseClickHouseDateTime(String(value).length === 10 ? `${value} 00:00:00` : String(value))
      if (!Number.isFinite(ms)) return null
      const iso = new Date(ms).toISOString()
      return type === 'Date' ? iso.slice(0, 10) : iso
    }
    case 'JSON': {
      const text = String(value)
      if (text === '' || text === 'null') return null
      try {
        return JSON.parse(text)
      } catch {
        return text
      }
    }
    default:
      return typeof value === 'string' ? value : String(value)
  }
}
