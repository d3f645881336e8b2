// Query API statements on the embedded DuckDB store, sent to its owner thread (duckdb-owner.ts): DuckDB computes on
// its own threads, so a statement never holds an event loop, and it is interrupted at the time limit or when the
// client leaves. At most `concurrency` at once, shared fairly between projects (slots.ts), the wait counting against
// the query's time. The owner reads rows a chunk at a time and counts them: past the answer's byte budget the rest
// is not read. DuckDB's memory is one pool: a statement that runs short of it beside others is run again alone
// (duckdb-turns.ts) before it is blamed, and a wait for such a turn past `busyWaitMs` answers 503 store_busy.
import { accessDuckDb } from '../events/duckdb-access'
import type { DuckDbAccess, DuckDbSettings } from '../events/duckdb-database'
import type { Metrics } from '../ops/metrics'
import type { CompiledQuery } from './compile'
import type { DialectName } from './dialect'
import { mappedPersonIds, OWN_STATEMENT_BYTES, QueryRunError, type QueryRunner, type RunOptions, type RunResult } from './runner'
import { FairSlots } from './slots'
import { StatementStop } from './statement-stop'
import { duckdbFailure, duckdbRunError, resultTooLarge, storeBusy } from './store-errors'

export interface DuckDbRunnerOptions {
  /** statements at once (a project holds at most half of them) */
  concurrency?: number
  /** EMBEDDED_DUCKDB_BUSY_WAIT_MS: the longest wait for a turn once the store ran short of memory */
  busyWaitMs?: number
  metrics?: Pick<Metrics, 'embeddedDuckDbShortOfMemory'>
}

/** What came of a statement that met DuckDB short of memory (embedded_duckdb_short_of_memory_total). */
type Shortage = 'retried_alone' | 'store_busy' | 'too_large_alone'

const DEFAULT_BUSY_WAIT_MS = 5_000

export class DuckDbQueryRunner implements QueryRunner {
  private readonly slots: FairSlots
  private readonly busyWaitMs: number
  private readonly metrics: DuckDbRunnerOptions['metrics']
  private access: Promise<DuckDbAccess> | undefined
  /** statements running (by id), stopped with the runner */
  private readonly running = new Set<number>()
  private nextId = 0
  private closed = false

  constructor(
    private readonly file: string,
    private readonly settings: DuckDbSettings,
    options: DuckDbRunnerOptions = {},
  ) {
    this.slots = new FairSlots(options.concurrency ?? 2)
    this.busyWaitMs = options.busyWaitMs ?? DEFAULT_BUSY_WAIT_MS
    this.metrics = options.metrics
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
    // the slot is given back when the statement has really ended, which DuckDB may do well after its interrupt:
    // it checks for one between chunks of work, not inside a long function call
    const ended: Promise<unknown>[] = []
    try {
      try {
        return await this.attempt(query, options, deadline, maxBytes, false, ended)
      } catch (error) {
        if (duckdbFailure(error) !== 'short_beside') throw error
        // short of memory with others beside it: perhaps theirs was the memory; it keeps its slot and runs alone
        this.count('retried_alone')
        return await this.attempt(query, options, deadline, maxBytes, true, ended)
      }
    } finally {
      void Promise.all(ended).finally(release)
    }
  }

  /** One run of the statement (`alone`: with no other statement of the store beside it); its end joins `ended`. */
  private async attempt(query: CompiledQuery, options: RunOptions, deadline: number, maxBytes: number, alone: boolean, ended: Promise<unknown>[]): Promise<RunResult> {
    const id = ++this.nextId
    let db: DuckDbAccess | undefined
    const stop = new StatementStop(options, deadline, () => void db?.interrupt(id))
    try {
      db = await this.connectStore().catch((error) => {
        throw new QueryRunError('The embedded event store could not be opened', 'unavailable', error)
      })
      const stoppedEarly = stop.error()
      if (stoppedEarly) throw stoppedEarly
      this.running.add(id)
      const streaming = db.stream(id, query.sql, query.params.sqlite, maxBytes, Math.max(1, deadline - Date.now()), { alone, waitMs: this.busyWaitMs })
      ended.push(streaming.catch(() => undefined).finally(() => this.running.delete(id)))
      // answered at the deadline (504) or when the client left (499), whether or not the store has stopped yet
      const { rows, truncated } = await Promise.race([streaming, stop.stopped.then(() => Promise.reject(stop.error()))])
      const stopped = stop.error()
      if (stopped) throw stopped
      if (truncated && rows.length === 0) throw resultTooLarge(maxBytes)
      return { rows, truncated }
    } catch (error) {
      const stopped = stop.error(error)
      if (stopped) throw stopped
      const failure = duckdbFailure(error)
      // the first run's shortage is retried by run(); a turn alone always has the store to itself
      if (failure === 'short_beside' && !alone) throw error
      if (failure) {
        this.count('store_busy')
        throw storeBusy(error)
      }
      const refused = duckdbRunError(error)
      if (refused.kind === 'query' && /^Out of Memory Error/i.test((error as Error)?.message ?? '')) this.count('too_large_alone')
      throw refused
    } finally {
      stop.done()
    }
  }

  private count(outcome: Shortage): void {
    this.metrics?.embeddedDuckDbShortOfMemory.inc({ outcome })
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
