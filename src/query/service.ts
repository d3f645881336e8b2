// A HogQL query of one project: parsed, checked, compiled for the store, run with a time limit, and its rows put in
// the same shape whatever the store (times as ISO 8601 UTC, numbers as numbers, properties as sent).
import { ApiError, errors } from '../http/errors'
import { parseClickHouseDateTime } from '../events/dialect'
import type { Metrics } from '../ops/metrics'
import { compileQuery, type CompiledQuery, type ValueType } from './compile'
import { QueryDeadlineError, QueryError, QueryLimitError } from './errors'
import { parseQuery } from './parser'
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
   * Parsed and compiled on this thread within the limits of docs/query.md (each step linear in the text, checked
   * against the deadline as it goes); between the two the event loop gets a turn when parsing took a while.
   */
  private async compile(teamId: number, text: string, deadline: number): Promise<CompiledQuery> {
    let spent = 0
    let started = 0
    try {
      const dialect = await this.runner.dialect()
      started = performance.now()
      const parsed = parseQuery(text, { deadline })
      spent = performance.now() - started
      started = 0
      if (spent > 1) await new Promise((resolve) => setImmediate(resolve))
      started = performance.now()
      return compileQuery(parsed, { dialect, teamId, database: this.runner.database, now: Date.now(), deadline })
    } catch (error) {
      if (error instanceof QueryLimitError) this.metrics?.queryCompileRefused.inc({ limit: error.limit })
      if (error instanceof QueryError) throw errors.validation('invalid_query', error.message, 'query')
      if (error instanceof QueryDeadlineError) {
        this.metrics?.queryCompileRefused.inc({ limit: 'time' })
        throw new ApiError(504, 'server_error', 'query_timeout', `${error.message} (${this.timeoutMs} ms)`)
      }
      throw this.runError(error)
    } finally {
      // refused or not, this is how long the thread was held
      if (started) spent += performance.now() - started
      this.metrics?.queryCompileSeconds.observe(spent / 1000)
    }
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
