// Query API statements on the embedded DuckDB store, in this process: DuckDB computes on its own threads, so a
// statement never holds the event loop, and connection.interrupt() stops it at the time limit or when the client
// leaves. At most `concurrency` at once, shared fairly between projects (slots.ts), the wait counting against the
// query's time. Rows are fetched a chunk at a time and counted: past the answer's byte budget the rest is not read.
import type { DuckDBConnection } from '@duckdb/node-api'
import { ownDuckDb, plainValue, type DuckDbDatabase, type DuckDbSettings } from '../events/duckdb-database'
import type { CompiledQuery } from './compile'
import { Params, type DialectName } from './dialect'
import { ownStatement, OWN_STATEMENT_BYTES, QueryRunError, type QueryRunner, type RunOptions, type RunResult } from './runner'
import { FairSlots } from './slots'
import { clientClosed, duckdbRunError, resultTooLarge, timedOut } from './store-errors'

/** A row's size as the other embedded runner counts it: a text's length, 8 for anything else. */
function rowBytes(row: unknown[]): number {
  let n = 2
  for (const value of row) n += typeof value === 'string' ? value.length + 3 : 8
  return n
}

export class DuckDbQueryRunner implements QueryRunner {
  private readonly slots: FairSlots
  private owner: Promise<{ db: DuckDbDatabase; release(): Promise<void> }> | undefined
  private readonly running = new Set<DuckDBConnection>()
  private closed = false

  constructor(
    private readonly file: string,
    private readonly settings: DuckDbSettings,
    concurrency = 2,
  ) {
    this.slots = new FairSlots(concurrency)
  }

  async dialect(): Promise<DialectName> {
    return 'duckdb'
  }

  slotUse() {
    return this.slots.use()
  }

  /** The process's owner of the file (shared with the event store; opened here if this runner is first). */
  private openDatabase(): Promise<DuckDbDatabase> {
    this.owner ??= ownDuckDb(this.file, this.settings)
    const owner = this.owner
    owner.catch(() => this.owner === owner && (this.owner = undefined))
    return owner.then((o) => o.db)
  }

  async run(query: CompiledQuery, options: RunOptions): Promise<RunResult> {
    if (this.closed) throw new QueryRunError('The query runner is closed', 'unavailable')
    const maxBytes = options.maxBytes ?? OWN_STATEMENT_BYTES
    const deadline = Date.now() + options.timeoutMs
    const release = await this.slots.acquire(options.teamId, deadline, options.signal)
    let connection: DuckDBConnection | undefined
    let stopped: 'timeout' | 'client_closed' | null = null
    const stop = (why: 'timeout' | 'client_closed') => {
      stopped ??= why
      connection?.interrupt()
    }
    const timer = setTimeout(() => stop('timeout'), Math.max(1, deadline - Date.now()))
    const onClientGone = () => stop('client_closed')
    if (options.signal?.aborted) onClientGone()
    options.signal?.addEventListener('abort', onClientGone, { once: true })
    try {
      const db = await this.openDatabase().catch((error) => {
        throw new QueryRunError('The embedded event store could not be opened', 'unavailable', error)
      })
      connection = await db.instance.connect()
      this.running.add(connection)
      if (stopped) throw stopped === 'timeout' ? timedOut(options.timeoutMs) : clientClosed()
      const rows: unknown[][] = []
      let bytes = 0
      let truncated = false
      const result = await connection.stream(query.sql, query.params.sqlite)
      reading: for (;;) {
        const chunk = await result.fetchChunk()
        if (!chunk || chunk.rowCount === 0) break
        for (const raw of chunk.getRows()) {
          const row = raw.map(plainValue)
          bytes += rowBytes(row)
          if (bytes > maxBytes) {
            truncated = true
            break reading
          }
          rows.push(row)
        }
      }
      if (stopped === 'client_closed') throw clientClosed()
      if (stopped === 'timeout') throw timedOut(options.timeoutMs)
      if (truncated && rows.length === 0) throw resultTooLarge(maxBytes)
      return { rows, truncated }
    } catch (error) {
      if (stopped === 'client_closed') throw clientClosed(error)
      if (stopped === 'timeout') throw timedOut(options.timeoutMs, error)
      throw duckdbRunError(error)
    } finally {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onClientGone)
      if (connection) {
        this.running.delete(connection)
        connection.closeSync()
      }
      release()
    }
  }

  async personIds(teamId: number, distinctIds: string[]): Promise<Map<string, string>> {
    if (distinctIds.length === 0) return new Map()
    const params = new Params('duckdb')
    const list = distinctIds.map((id) => params.string(id)).join(', ')
    const { rows } = await this.run(
      ownStatement(`SELECT distinct_id, person_id FROM person_distinct_id WHERE team_id = ${Math.trunc(teamId)} AND distinct_id IN (${list}) AND person_id IS NOT NULL`, params, 2),
      { teamId, timeoutMs: 10_000 },
    )
    return new Map(rows.map(([d, p]) => [String(d), String(p)]))
  }

  async close(): Promise<void> {
    this.closed = true
    // running statements too: nothing of this runner outlives it
    for (const connection of this.running) connection.interrupt()
    const owner = this.owner
    this.owner = undefined
    await (await owner?.catch(() => undefined))?.release()
  }
}
