// Query API statements on the embedded DuckDB store, sent to its owner thread (duckdb-owner.ts): DuckDB computes on
// its own threads, so a statement never holds an event loop, and it is interrupted at the time limit or when the
// client leaves. At most `concurrency` at once, shared fairly between projects (slots.ts), the wait counting against
// the query's time. The owner reads rows a chunk at a time and counts them: past the answer's byte budget the rest
// is not read.
import { accessDuckDb } from '../events/duckdb-access'
import type { DuckDbAccess, DuckDbSettings } from '../events/duckdb-database'
import type { CompiledQuery } from './compile'
import type { DialectName } from './dialect'
import { mappedPersonIds, OWN_STATEMENT_BYTES, QueryRunError, type QueryRunner, type RunOptions, type RunResult } from './runner'
import { FairSlots } from './slots'
import { StatementStop } from './statement-stop'
import { duckdbRunError, resultTooLarge } from './store-errors'

export class DuckDbQueryRunner implements QueryRunner {
  private readonly slots: FairSlots
  private access: Promise<DuckDbAccess> | undefined
  /** statements running (by id), stopped with the runner */
  private readonly running = new Set<number>()
  private nextId = 0
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

  /** The process's database (its owner thread shared with the event store; started here if this runner is first). */
  private connectStore(): Promise<DuckDbAccess> {
    this.access ??= accessDuckDb(this.file, this.settings)
    const access = this.access
    access.catch(() => this.access === access && (this.access = undefined))
    return access
  }

  async run(query: CompiledQuery, options: RunOptions): Promise<RunResult> {
    if (this.closed) throw new QueryRunError('The query runner is closed', 'unavailable')
    const maxBytes = options.maxBytes ?? OWN_STATEMENT_BYTES
    const deadline = Date.now() + options.timeoutMs
    const release = await this.slots.acquire(options.teamId, deadline, options.signal)
    const id = ++this.nextId
    let db: DuckDbAccess | undefined
    const stop = new StatementStop(options, deadline, () => void db?.interrupt(id))
    // the slot is given back when the statement has really ended, which DuckDB may do well after its interrupt:
    // it checks for one between chunks of work, not inside a long function call
    let ended: Promise<unknown> = Promise.resolve()
    try {
      db = await this.connectStore().catch((error) => {
        throw new QueryRunError('The embedded event store could not be opened', 'unavailable', error)
      })
      const stoppedEarly = stop.error()
      if (stoppedEarly) throw stoppedEarly
      this.running.add(id)
      const streaming = db.stream(id, query.sql, query.params.sqlite, maxBytes, Math.max(1, deadline - Date.now()))
      ended = streaming.catch(() => undefined)
      // answered at the deadline (504) or when the client left (499), whether or not the store has stopped yet
      const { rows, truncated } = await Promise.race([streaming, stop.stopped.then(() => Promise.reject(stop.error()))])
      const stopped = stop.error()
      if (stopped) throw stopped
      if (truncated && rows.length === 0) throw resultTooLarge(maxBytes)
      return { rows, truncated }
    } catch (error) {
      throw stop.error(error) ?? duckdbRunError(error)
    } finally {
      stop.done()
      void ended.finally(() => {
        this.running.delete(id)
        release()
      })
    }
  }

  personIds(teamId: number, distinctIds: string[]): Promise<Map<string, string>> {
    return mappedPersonIds(this, 'duckdb', teamId, distinctIds)
  }

  async close(): Promise<void> {
    this.closed = true
    const access = this.access
    this.access = undefined
    const db = await access?.catch(() => undefined)
    // running statements too: nothing of this runner outlives it
    await Promise.all([...this.running].map((id) => db?.interrupt(id)))
    await db?.release()
  }
}
