// Query API statements on ClickHouse (a server, a cluster, or chDB in the tests), each within its budgets: the
// server gets the time, memory and result limits with a query id of ours, the answer is read row by row up to its
// byte budget, and the statement is killed (on every node of a cluster) at the timeout, when the client leaves,
// or when the budget is reached.
import type { ClickHouseClient } from '@clickhouse/client'
import type { Readable } from 'node:stream'
import { parseClickHouseUrl, replicaChoice } from '../events/clickhouse-target'
import { parseVersion } from '../events/dialect'
import { readJsonCompact, type ReadAnswer } from './clickhouse-answer'
import type { CompiledQuery } from './compile'
import { Params, type DialectName } from './dialect'
import { ownStatement, OWN_STATEMENT_BYTES, QueryRunError, type QueryRunner, type RunOptions, type RunResult } from './runner'
import { FairSlots } from './slots'
import { clickhouseRunError, clientClosed, resultTooLarge, timedOut } from './store-errors'

export interface ClickHouseRunnerOptions {
  /** chDB in the tests: an engine without HTTP */
  client?: ClickHouseClient
  /** CLICKHOUSE_CLUSTER: a statement is killed on every node */
  cluster?: string
  /** QUERY_MAX_MEMORY: max_memory_usage of each statement */
  maxMemoryBytes?: number
  /** statements running at once (shared fairly between projects) */
  slots?: number
}

const DEFAULT_MAX_MEMORY = 1024 ** 3
const DEFAULT_SLOTS = 16
/**
 * The server's own result byte limit, a backstop behind ours: it stops producing rows (block by block, after the
 * block that crossed it) once the result holds this many bytes in memory. A row in memory is never more than about
 * four times its text (a number: 8 bytes, at least 2 characters with its separator), so the byte budget read here
 * is always reached first and hasMore stays true; the server stops computing soon after.
 */
const SERVER_RESULT_BYTES_FACTOR = 4

export class ClickHouseQueryRunner implements QueryRunner {
  private readonly client: ClickHouseClient | undefined
  private readonly target: ReturnType<typeof parseClickHouseUrl>
  readonly database: string
  private dialectValue: Promise<DialectName> | undefined
  private readonly slots: FairSlots
  private readonly authorization: string

  /**
   * Queries go over plain fetch (a few milliseconds less per query than @clickhouse/client on Bun, which counts
   * for a dashboard's small queries); `client` instead, for an engine without HTTP (chDB in the tests).
   */
  constructor(
    url: string,
    private readonly options: ClickHouseRunnerOptions = {},
  ) {
    this.target = parseClickHouseUrl(url)
    this.database = this.target.database
    this.client = options.client
    this.slots = new FairSlots(options.slots ?? DEFAULT_SLOTS)
    this.authorization = `Basic ${Buffer.from(`${this.target.username}:${this.target.password}`).toString('base64')}`
  }

  dialect(): Promise<DialectName> {
    this.dialectValue ??= (async () => {
      const { rows } = await this.send(ownStatement('SELECT version()', new Params('clickhouse-legacy'), 1), { teamId: 0, timeoutMs: 10_000 })
      return parseVersion(String(rows[0]?.[0])).major >= 20 ? 'clickhouse-modern' : 'clickhouse-legacy'
    })().catch((error) => {
      this.dialectValue = undefined
      throw error instanceof QueryRunError ? error : new QueryRunError('ClickHouse is not reachable', 'unavailable', error)
    })
    return this.dialectValue
  }

  slotUse() {
    return this.slots.use()
  }

  async run(query: CompiledQuery, options: RunOptions): Promise<RunResult> {
    const deadline = Date.now() + options.timeoutMs
    const release = await this.slots.acquire(options.teamId, deadline, options.signal)
    try {
      return await this.send(query, { ...options, timeoutMs: Math.max(1, deadline - Date.now()) })
    } finally {
      release()
    }
  }

  private async send(query: CompiledQuery, options: RunOptions): Promise<RunResult> {
    const maxBytes = options.maxBytes ?? OWN_STATEMENT_BYTES
    const abort = new AbortController()
    const queryId = `phog-${crypto.randomUUID()}`
    let stopped: 'timeout' | 'client_closed' | null = null
    // 18.16 does not notice a closed connection until it writes: the statement is killed by its id
    const cancel = (why: 'timeout' | 'client_closed') => {
      if (abort.signal.aborted) return
      stopped = why
      abort.abort()
      if (!this.client) void this.kill(queryId)
    }
    const timer = setTimeout(() => cancel('timeout'), options.timeoutMs)
    const onClientGone = () => cancel('client_closed')
    options.signal?.addEventListener('abort', onClientGone, { once: true })
    const settings = this.settings(query, options.timeoutMs, maxBytes)
    try {
      const answer = this.client ? await this.viaClient(query, settings, queryId, abort.signal, maxBytes) : await this.viaHttp(query, settings, queryId, abort.signal, maxBytes)
      if (answer.firstRowTooLarge) throw resultTooLarge(maxBytes)
      if (answer.truncated && !this.client) void this.kill(queryId) // the rest is not wanted
      return { rows: answer.rows, truncated: answer.truncated }
    } catch (error) {
      if (stopped === 'client_closed' || options.signal?.aborted) throw clientClosed(error)
      if (stopped === 'timeout') throw timedOut(options.timeoutMs, error)
      throw clickhouseRunError(error, { timeoutMs: options.timeoutMs, maxBytes })
    } finally {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onClientGone)
    }
  }

  /**
   * The budgets the server enforces itself (18.16 and current servers take the same ones): the time, the memory,
   * and the result (the rows the statement's LIMIT allows; the bytes, a backstop behind the byte budget read here).
   * Not the result limits on a cluster: the shards apply them to what they send the initiator (partial aggregates,
   * sorted runs), and "break" there made a sorted answer skip rows of one shard (an answer that was no prefix of the
   * ordered rows). There the byte budget read here, the kill and max_execution_time bound the statement, and the
   * replicas are picked in order (replicaChoice: what was just written is read).
   */
  private settings(query: CompiledQuery, timeoutMs: number, maxBytes: number): Record<string, string> {
    const settings: Record<string, string> = {
      max_execution_time: String(Math.max(1, Math.ceil(timeoutMs / 1000))),
      max_memory_usage: String(this.options.maxMemoryBytes ?? DEFAULT_MAX_MEMORY),
    }
    if (this.options.cluster !== undefined) return { ...settings, ...replicaChoice(this.options.cluster) }
    settings.max_result_bytes = String(maxBytes * SERVER_RESULT_BYTES_FACTOR)
    settings.result_overflow_mode = 'break'
    // a user's statement ends in LIMIT limit+1
    if (query.limit > 0) settings.max_result_rows = String(query.offset + query.limit + 1)
    return settings
  }

  private async viaHttp(query: CompiledQuery, settings: Record<string, string>, queryId: string, signal: AbortSignal, maxBytes: number): Promise<ReadAnswer> {
    const url = new URL(this.target.url)
    url.searchParams.set('database', this.database)
    url.searchParams.set('default_format', 'JSONCompact')
    url.searchParams.set('query_id', queryId)
    for (const [name, value] of Object.entries(settings)) url.searchParams.set(name, value)
    for (const [name, value] of Object.entries(query.params.clickhouse)) url.searchParams.set(`param_${name}`, value)
    const response = await fetch(url, { method: 'POST', body: query.sql, headers: { authorization: this.authorization }, signal })
    if (!response.ok || !response.body) {
      const text = (await response.text()).trim()
      throw Object.assign(new Error(text), { code: response.headers.get('x-clickhouse-exception-code') ?? undefined })
    }
    return readJsonCompact(response.body, maxBytes)
  }

  private async viaClient(query: CompiledQuery, settings: Record<string, string>, queryId: string, signal: AbortSignal, maxBytes: number): Promise<ReadAnswer> {
    const rs = await this.client!.query({
      query: query.sql,
      format: 'JSONCompactEachRow',
      query_id: queryId,
      query_params: Object.keys(query.params.clickhouse).length ? query.params.clickhouse : undefined,
      clickhouse_settings: settings,
      abort_signal: signal,
    })
    const stream = rs.stream() as unknown as Readable & AsyncIterable<{ text: string; json(): unknown }[]>
    const rows: unknown[][] = []
    let bytes = 0
    for await (const batch of stream) {
      for (const row of batch) {
        if (bytes + row.text.length > maxBytes) {
          stream.destroy()
          return { rows, truncated: true, firstRowTooLarge: rows.length === 0 }
        }
        bytes += row.text.length
        rows.push(row.json() as unknown[])
      }
    }
    return { rows, truncated: false, firstRowTooLarge: false }
  }

  /** Stop a statement by its id, on every node of a cluster (its parts on the shards carry it as initial_query_id). */
  private async kill(queryId: string): Promise<void> {
    const onCluster = this.options.cluster ? ` ON CLUSTER ${this.options.cluster}` : ''
    try {
      await fetch(new URL(this.target.url), {
        method: 'POST',
        body: `KILL QUERY${onCluster} WHERE query_id = '${queryId}' OR initial_query_id = '${queryId}' ASYNC`,
        headers: { authorization: this.authorization },
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
    const { rows } = await this.run(
      ownStatement(
        `SELECT distinct_id, toString(argMax(person_id, version)) FROM ${this.database}.person_distinct_id WHERE team_id = ${Math.trunc(teamId)} AND distinct_id IN (${list}) GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0`,
        params,
        2,
      ),
      { teamId, timeoutMs: 10_000 },
    )
    return new Map(rows.map(([d, p]) => [String(d), String(p)]))
  }

  async close(): Promise<void> {}
}
