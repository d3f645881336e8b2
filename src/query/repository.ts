// Where compiled queries run: ClickHouse (a server, a cluster, or chDB in tests) or the embedded event store.
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseClickHouseUrl } from '../events/clickhouse'
import { parseVersion } from '../events/dialect'
import type { CompiledQuery } from './compile'
import { Params, type DialectName } from './dialect'
import type { SqliteQueryAnswer, SqliteQueryRequest } from './sqlite-process'

/** The store could not run the statement: `kind` says whose fault (the query's, time, or the store's). */
export class QueryRunError extends Error {
  constructor(
    message: string,
    readonly kind: 'query' | 'timeout' | 'unavailable',
    override readonly cause?: unknown,
  ) {
    super(message)
  }
}

export interface QueryRunner {
  /** the dialect to compile for (ClickHouse's is known after its version is read) */
  dialect(): Promise<DialectName>
  readonly database?: string
  run(query: CompiledQuery, options: { timeoutMs: number; signal?: AbortSignal }): Promise<unknown[][]>
  /** the person each of these distinct ids belongs to now (ids with none are absent) */
  personIds(teamId: number, distinctIds: string[]): Promise<Map<string, string>>
  close(): Promise<void>
}

/** A statement of this module's own (not from a user's text), in the shape run() takes. */
function ownStatement(sql: string, params: Params, columns: number): CompiledQuery {
  return { sql, params, columns: Array(columns).fill(''), types: [], limit: 0, offset: 0 }
}

// ClickHouse error codes that are about the query (a type the functions do not take, a value out of range…)
const QUERY_FAULT = new Set(['6', '27', '36', '38', '41', '42', '43', '44', '46', '47', '53', '69', '70', '72', '131', '179', '184', '215', '352', '386', '396'])
const TIMEOUT = new Set(['159', '160', '394'])

function clickhouseCode(error: unknown): string {
  const message = (error as Error)?.message ?? ''
  return String((error as { code?: string | number })?.code ?? /^Code: (\d+)/.exec(message)?.[1] ?? '')
}

export class ClickHouseQueryRunner implements QueryRunner {
  private readonly client: ClickHouseClient
  private readonly ownsClient: boolean
  readonly database: string
  private dialectValue: Promise<DialectName> | undefined

  constructor(url: string, options: { client?: ClickHouseClient } = {}) {
    const target = parseClickHouseUrl(url)
    this.database = target.database
    this.ownsClient = !options.client
    this.client =
      options.client ??
      createClient({
        url: target.url,
        username: target.username,
        password: target.password,
        request_timeout: 600_000,
        max_open_connections: 4,
        log: { level: ClickHouseLogLevel.OFF },
      })
  }

  dialect(): Promise<DialectName> {
    this.dialectValue ??= (async () => {
      const rs = await this.client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' })
      const [{ v }] = (await rs.json()) as { v: string }[]
      return parseVersion(v).major >= 20 ? 'clickhouse-modern' : 'clickhouse-legacy'
    })().catch((error) => {
      this.dialectValue = undefined
      throw new QueryRunError(`ClickHouse is not reachable: ${(error as Error).message}`, 'unavailable', error)
    })
    return this.dialectValue
  }

  async run(query: CompiledQuery, options: { timeoutMs: number; signal?: AbortSignal }): Promise<unknown[][]> {
    const abort = new AbortController()
    const timer = setTimeout(() => abort.abort(), options.timeoutMs + 1000)
    const onClientGone = () => abort.abort()
    options.signal?.addEventListener('abort', onClientGone, { once: true })
    try {
      const rs = await this.client.query({
        query: query.sql,
        format: 'JSONCompact',
        query_params: Object.keys(query.params.clickhouse).length ? query.params.clickhouse : undefined,
        // the server stops the statement itself; the abort closes the HTTP request when the client has gone
        clickhouse_settings: { max_execution_time: Math.max(1, Math.ceil(options.timeoutMs / 1000)) },
        abort_signal: abort.signal,
      })
      const body = (await rs.json()) as { data: unknown[][] }
      return body.data
    } catch (error) {
      const code = clickhouseCode(error)
      if (TIMEOUT.has(code) || (abort.signal.aborted && !options.signal?.aborted)) {
        throw new QueryRunError(`The query ran longer than ${options.timeoutMs} ms and was cancelled`, 'timeout', error)
      }
      if (QUERY_FAULT.has(code)) throw new QueryRunError(`The store could not run this query: ${firstLine(error)}`, 'query', error)
      throw new QueryRunError(`ClickHouse failed: ${firstLine(error)}`, 'unavailable', error)
    } finally {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onClientGone)
    }
  }

  async personIds(teamId: number, distinctIds: string[]): Promise<Map<string, string>> {
    if (distinctIds.length === 0) return new Map()
    const params = new Params(await this.dialect())
    const list = distinctIds.map((id) => params.string(id)).join(', ')
    const rows = await this.run(
      ownStatement(
        `SELECT distinct_id, toString(argMax(person_id, version)) FROM ${this.database}.person_distinct_id WHERE team_id = ${Math.trunc(teamId)} AND distinct_id IN (${list}) GROUP BY distinct_id`,
        params,
        2,
      ),
      { timeoutMs: 10_000 },
    )
    return new Map(rows.map(([d, p]) => [String(d), String(p)]))
  }

  async close(): Promise<void> {
    if (this.ownsClient) await this.client.close()
  }
}

function firstLine(error: unknown): string {
  return ((error as Error)?.message ?? String(error)).split('\n')[0].replace(/, e\.what\(\) = .*$/, '').slice(0, 300)
}

const SQLITE_PROCESS = fileURLToPath(new URL('./sqlite-process.ts', import.meta.url))

interface Child {
  process: ReturnType<typeof Bun.spawn>
  busy: boolean
  waiting: Map<number, (answer: SqliteQueryAnswer) => void>
}

/**
 * The embedded event store's queries, in child processes (at most `concurrency` at once; the others wait their
 * turn, and the wait counts against their time). A statement that overruns its time, or whose client went away,
 * is stopped by killing its process.
 */
export class SqliteQueryRunner implements QueryRunner {
  private readonly idle: Child[] = []
  private running = 0
  private readonly queue: (() => void)[] = []
  private next = 0
  private closed = false

  constructor(
    private readonly file: string,
    private readonly concurrency = 2,
  ) {}

  async dialect(): Promise<DialectName> {
    return 'sqlite'
  }

  private spawn(): Child {
    const waiting = new Map<number, (answer: SqliteQueryAnswer) => void>()
    const child: Child = {
      waiting,
      busy: false,
      process: Bun.spawn({
        cmd: [process.execPath, SQLITE_PROCESS, this.file],
        stdio: ['ignore', 'ignore', 'inherit'],
        ipc: (message: SqliteQueryAnswer) => {
          waiting.get(message.id)?.(message)
          waiting.delete(message.id)
        },
        serialization: 'json',
      }),
    }
    void child.process.exited.then(() => {
      for (const done of waiting.values()) done({ id: -1, error: 'the query process ended', code: 'EXITED' })
      waiting.clear()
    })
    return child
  }

  private async slot(deadline: number, signal?: AbortSignal): Promise<void> {
    while (this.running >= this.concurrency) {
      if (Date.now() >= deadline) throw new QueryRunError('The query waited longer than its time for a free slot', 'timeout')
      if (signal?.aborted) throw new QueryRunError('The client went away', 'timeout')
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()))
        this.queue.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    this.running++
  }

  private release(): void {
    this.running--
    this.queue.shift()?.()
  }

  async run(query: CompiledQuery, options: { timeoutMs: number; signal?: AbortSignal }): Promise<unknown[][]> {
    if (this.closed) throw new QueryRunError('The query runner is closed', 'unavailable')
    if (!existsSync(this.file)) return []
    const deadline = Date.now() + options.timeoutMs
    await this.slot(deadline, options.signal)
    const child = this.idle.pop() ?? this.spawn()
    const id = ++this.next
    let stopped: 'timeout' | 'gone' | null = null
    const stop = (why: 'timeout' | 'gone') => {
      stopped = why
      child.process.kill('SIGKILL')
    }
    const timer = setTimeout(() => stop('timeout'), Math.max(1, deadline - Date.now()))
    const onClientGone = () => stop('gone')
    options.signal?.addEventListener('abort', onClientGone, { once: true })
    try {
      const answer = await new Promise<SqliteQueryAnswer>((resolve) => {
        child.waiting.set(id, resolve)
        child.process.send({ id, sql: query.sql, params: query.params.sqlite } satisfies SqliteQueryRequest)
      })
      if (stopped) throw new QueryRunError(`The query ran longer than ${options.timeoutMs} ms and was cancelled`, 'timeout')
      if ('error' in answer) {
        if (answer.code === 'EXITED') throw new QueryRunError('The query process ended unexpectedly', 'unavailable')
        throw new QueryRunError(`The store could not run this query: ${answer.error}`, answer.code.startsWith('SQLITE_BUSY') ? 'unavailable' : 'query')
      }
      return answer.rows
    } finally {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onClientGone)
      if (!stopped && !this.closed && child.process.exitCode === null && !child.process.killed) this.idle.push(child)
      this.release()
    }
  }

  async personIds(teamId: number, distinctIds: string[]): Promise<Map<string, string>> {
    if (distinctIds.length === 0) return new Map()
    const params = new Params('sqlite')
    const list = distinctIds.map((id) => params.string(id)).join(', ')
    const rows = await this.run(
      ownStatement(`SELECT distinct_id, person_id FROM person_distinct_id WHERE team_id = ${Math.trunc(teamId)} AND distinct_id IN (${list})`, params, 2),
      { timeoutMs: 10_000 },
    )
    return new Map(rows.map(([d, p]) => [String(d), String(p)]))
  }

  async close(): Promise<void> {
    this.closed = true
    for (const child of this.idle.splice(0)) child.process.kill()
  }
}
