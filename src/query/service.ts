// A HogQL query of one project: parsed, checked, compiled for the store, run with a time limit, and its rows put in
// the same shape whatever the store (times as ISO 8601 UTC, numbers as numbers, properties as sent).
import { ApiError, errors } from '../http/errors'
import { parseClickHouseDateTime } from '../events/dialect'
import type { Metrics } from '../ops/metrics'
import type { CompiledQuery, ValueType } from './compile'
import { compiledQuery, compileHere, type CompileThread } from './compile-thread'
import { QueryRunError, type QueryRunner } from './repository'

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

export class QueryService {
  constructor(
    private readonly runner: QueryRunner,
    private readonly timeoutMs: number,
    private readonly metrics?: Pick<Metrics, 'queryCompileRefused' | 'queryCompileSeconds'>,
    /** where queries are compiled (none: on the caller's thread) */
    private readonly compiler?: CompileThread,
  ) {}

  async run(teamId: number, text: string, signal?: AbortSignal): Promise<QueryAnswer> {
    // compiling and running share QUERY_TIMEOUT_MS
    const deadline = performance.now() + this.timeoutMs
    const compiled = await this.compile(teamId, text, deadline)
    let rows: unknown[][]
    try {
      rows = await this.runner.run(compiled, { timeoutMs: Math.max(1, Math.floor(deadline - performance.now())), signal })
    } catch (error) {
      throw this.runError(error)
    }
    const hasMore = rows.length > compiled.limit
    if (hasMore) rows.length = compiled.limit
    const sqlite = (await this.runner.dialect()) === 'sqlite'
    return {
      results: rows.map((row) => row.map((value, i) => normalize(value, compiled.types[i], sqlite))),
      columns: compiled.columns,
      types: compiled.types.map((t) => TYPE_NAMES[t]),
      hasMore,
      limit: compiled.limit,
      offset: compiled.offset,
    }
  }

  /**
   * Parsed and compiled within the limits of docs/query.md, on the compiler's own thread when there is one (the
   * server's), so that not even the first large query holds the thread that answers capture and /decide.
   */
  private async compile(teamId: number, text: string, deadline: number): Promise<CompiledQuery> {
    let dialect
    try {
      dialect = await this.runner.dialect() // ClickHouse's is read from the server: it may be unreachable (503)
    } catch (error) {
      throw this.runError(error)
    }
    const request = { text, target: { dialect, teamId, database: this.runner.database, now: Date.now() }, deadline: Date.now() + (deadline - performance.now()) }
    const answer = this.compiler ? await this.compiler.compile(request) : compileHere(request)
    this.metrics?.queryCompileSeconds.observe(answer.ms / 1000)
    if ('compiled' in answer) return compiledQuery(dialect, answer.compiled)
    if ('failed' in answer) throw Object.assign(new Error(`Compiling a query failed: ${answer.failed.message}`), { stack: answer.failed.stack })
    if (answer.refused === 'deadline') {
      this.metrics?.queryCompileRefused.inc({ limit: 'time' })
      throw new ApiError(504, 'server_error', 'query_timeout', `${answer.message} (${this.timeoutMs} ms)`)
    }
    if (answer.limit) this.metrics?.queryCompileRefused.inc({ limit: answer.limit })
    throw errors.validation('invalid_query', answer.message, 'query')
  }

  /** The person each distinct id belongs to now (for the events API's person_id). */
  personIds(teamId: number, distinctIds: string[]): Promise<Map<string, string>> {
    return this.runner.personIds(teamId, distinctIds)
  }

  private runError(error: unknown): ApiError {
    if (error instanceof ApiError) return error
    if (error instanceof QueryRunError) {
      if (error.kind === 'query') return errors.validation('invalid_query', error.message, 'query')
      if (error.kind === 'timeout') return new ApiError(504, 'server_error', 'query_timeout', error.message)
      return Object.assign(errors.unavailable('event_store_unavailable', 'The event store is not reachable. Please retry shortly.'), { cause: error })
    }
    throw error
  }
}

/** One value as the API answers it, the same from every store. */
export function normalize(value: unknown, type: ValueType, sqlite: boolean): unknown {
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
      const ms = sqlite ? Number(value) : typeof value === 'number' ? value * 1000 : parseClickHouseDateTime(String(value).length === 10 ? `${value} 00:00:00` : String(value))
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
