// Where compiled queries run: ClickHouse (a server, a cluster, or chDB in tests) or the embedded event store.
import type { ClickHouseClient } from '@clickhouse/client'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseClickHouseUrl } from '../events/clickhouse-target'
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

// ClickHouse error codes that say the server (or the cluster) is in trouble, not the query: retry later (503).
// Any other error the server answers with a code is the query's (400 with the server's words: a value a function
// does not take, a division by zero, more memory than allowed…); no code at all is the network (503).
const SERVER_TROUBLE = new Set(['60', '81', '202', '209', '210', '225', '242', '279', '999'])
const TIMEOUT = new Set(['159', '160', '394'])

function clickhouseCode(error: unknown): string {
  const message = (error as Error)?.message ?? ''
  return String((error as { code?: string | number })?.code ?? /^Code: (\d+)/.exec(message)?.[1] ?? '')
}

export class ClickHouseQueryRunner implements QueryRunner {
  private readonly client: ClickHouseClient | undefined
  private readonly target: ReturnType<typeof parseClickHouseUrl>
  readonly database: string
  private dialectValue: Promise<DialectName> | undefined

  /**
   * Queries go over plain fetch (a few milliseconds less per query than @clickhouse/client on Bun, which counts
   * for a dashboard's small queries); `client` instead, for an engine without HTTP (chDB in the tests).
   */
  constructor(url: string, options: { client?: ClickHouseClient } = {}) {
    this.target = parseClickHouseUrl(url)
    this.database = this.target.database
    this.client = options.client
  }

  dialect(): Promise<DialectName> {
    this.dialectValue ??= (async () => {
      const [[v]] = await this.send('SELECT version()', {}, { timeoutMs: 10_000 })
      return parseVersion(String(v)).major >= 20 ? 'clickhouse-modern' : 'clickhouse-legacy'
    })().catch((error) => {
      this.dialectValue = undefined
      throw error instanceof QueryRunError ? error : new QueryRunError(`ClickHouse is not reachable: ${(error as Error).message}`, 'unavailable', error)
    })
    return this.dialectValue
  }

  run(query: CompiledQuery, options: { timeoutMs: number; signal?: AbortSignal }): Promise<unknown[][]> {
    return this.send(query.sql, query.params.clickhouse, options)
  }

  private async send(sql: string, params: Record<string, string>, options: { timeoutMs: number; signal?: AbortSignal }): Promise<unknown[][]> {
    const abort = new AbortController()
    const queryId = crypto.randomUUID()
    // ClickHouse 18.16 does not notice a closed connection until it writes: the statement is killed by its id
    const cancel = () => {
      if (abort.signal.aborted) return
      abort.abort()
      if (!this.client) void this.kill(queryId)
    }
    const timer = setTimeout(cancel, options.timeoutMs + 1000)
    options.signal?.addEventListener('abort', cancel, { once: true })
    // the server stops the statement itself at max_execution_time; a client that goes away cancels it sooner
    const maxSeconds = Math.max(1, Math.ceil(options.timeoutMs / 1000))
    try {
      if (this.client) {
        const rs = await this.client.query({
          query: sql,
          format: 'JSONCompact',
          query_params: Object.keys(params).length ? params : undefined,
          clickhouse_settings: { max_execution_time: maxSeconds },
          abort_signal: abort.signal,
        })
        return ((await rs.json()) as { data: unknown[][] }).data
      }
      const url = new URL(this.target.url)
      url.searchParams.set('database', this.database)
      url.searchParams.set('default_format', 'JSONCompact')
      url.searchParams.set('max_execution_time', String(maxSeconds))
      url.searchParams.set('query_id', queryId)
      for (const [name, value] of Object.entries(params)) url.searchParams.set(`param_${name}`, value)
      const response = await fetch(url, {
        method: 'POST',
        body: sql,
        headers: { authorization: `Basic ${Buffer.from(`${this.target.username}:${this.target.password}`).toString('base64')}` },
        signal: abort.signal,
      })
      const text = await response.text()
      if (!response.ok) throw Object.assign(new Error(text.trim()), { code: response.headers.get('x-clickhouse-exception-code') ?? undefined })
      return (JSON.parse(text) as { data: unknown[][] }).data
    } catch (error) {
      const code = clickhouseCode(error)
      if (TIMEOUT.has(code) || (abort.signal.aborted && !options.signal?.aborted)) {
        throw new QueryRunError(`The query ran longer than ${options.timeoutMs} ms and was cancelled`, 'timeout', error)
      }
      if (code && !SERVER_TROUBLE.has(code)) throw new QueryRunError(`The store could not run this query: ${firstLine(error)}`, 'query', error)
      throw new QueryRunError(`ClickHouse failed: ${firstLine(error)}`, 'unavailable', error)
    } finally {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', cancel)
    }
  }

  private async kill(queryId: string): Promise<void> {
    try {
      const url = new URL(this.target.url)
      await fetch(url, {
        method: 'POST',
        body: `KILL QUERY WHERE query_id = '${queryId}' ASYNC`,
        headers: { authorization: `Basic ${Buffer.from(`${this.target.username}:${this.target.password}`).toString('base64')}` },
        signal: AbortSignal.timeout(5000),
      }).then((r) => r.text())
    } catch {
      // max_execution_time still stops it
    }
  }

  async personIds(teamId: number, distinctIds: string[]): Promise<Map<string, string>> {
    if (distinctIds.length === 0) return new Map()
    const params = new Params(await this.dialect())
    const list = distinctIds.map((id) => params.string(id)).join(', ')
    const rows = await this.run(
      ownStatement(
        `SELECT distinct_id, toString(argMax(person_id, version)) FROM ${this.database}.person_distinct_id WHERE team_id = ${Math.trunc(teamId)} AND distinct_id IN (${list}) GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0`,
        params,
        2,
      ),
      { timeoutMs: 10_000 },
    )
    return new Map(rows.map(([d, p]) => [String(d), String(p)]))
  }

  async close(): Promise<void> {}
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
  private readonly all = new Set<Child>()
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
    this.all.add(child)
    void child.process.exited.then(() => {
      this.all.delete(child)
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
      ownStatement(`SELECT distinct_id, person_id FROM person_distinct_id WHERE team_id = ${Math.trunc(teamId)} AND distinct_id IN (${list}) AND person_id IS NOT NULL`, params, 2),
      { timeoutMs: 10_000 },
    )
    return new Map(rows.map(([d, p]) => [String(d), String(p)]))
  }

  async close(): Promise<void> {
    this.closed = true
    this.idle.length = 0
    // running statements too: nothing of this runner outlives it
    for (const child of this.all) child.process.kill('SIGKILL')
    this.all.clear()
  }
}
