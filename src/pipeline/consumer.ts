// A consumer reads the log in order from its own cursor, in batches, and hands each batch to its handler
// (the store writer; the persons/definitions learner). A failing batch is retried with backoff while the
// log keeps accepting; the cursor moves, durably, only after the handler succeeds. A batch that keeps
// failing while the handler's store answers is split until its poison events are isolated (isolate.ts).
import type { Logger } from '../log'
import type { Checkpoint } from './checkpoint'
import { isolatePoison, reasonOf, type PoisonSink } from './isolate'
import { OutageWatch } from './outage'
import type { LoggedRecord, Ring } from './ring'
import { WalReader, type WalRecord, type WalSource } from './wal-reader'

export interface Batch {
  records: LoggedRecord[]
  firstSeq: number
  lastSeq: number
  /** events after normalisation */
  events: number
  /** events the requests carried, dropped ones included */
  items: number
  bytes: number
}

export interface BatchHandler {
  readonly name: string
  /** the store it writes to (clickhouse, embedded, postgres), named in the outage logs */
  readonly store?: string
  /** Process a batch; throw to have it retried. `inDoubt`: a previous attempt may have taken effect. */
  handle(batch: Batch, inDoubt: boolean): Promise<void>
  /** Whether the handler's store answers now (a ping): tells a store that is down from a batch it refuses. */
  probe(): Promise<boolean>
  /** True when the error is certainly the batch's fault (the store refused its data), whatever a ping says. */
  rejects?(error: unknown): boolean
  /** The handler finds and dead-letters refused rows itself: its batches are never split. */
  readonly selfIsolating?: boolean
  /**
   * A handler that holds rows across batches before writing them (history-writer.ts): the oldest record whose
   * rows it still holds. The durable cursor stays before it, so that a crash replays what was not written.
   */
  heldFrom?(): number | null
  /** Write what is held when due (`force`: now); called when no batch is waiting, and when draining. */
  idle?(force: boolean): Promise<boolean>
}

export interface ConsumerDeps {
  wal: WalSource
  ring: Ring
  checkpoint: Checkpoint
  /** turn a record read back from the log into events (the capture replay path) */
  replay(record: WalRecord): LoggedRecord
  maxEvents: number
  intervalMs: number
  log: Logger
  onFailure?(consumer: string, reason: string): void
  /** events isolated as poison: to the dead-letter file, in the consumer's name */
  poison: PoisonSink
  /** called after the cursor moved */
  onProgress(): void
  /** events accepted and not yet finished by this consumer (for the outage logs), where known */
  waitingEvents?(consumedItems: number): number
  /** how often an outage is summarised in the log (default a minute) */
  outageSummaryMs?: number
}

/** What a record counts for against the log's cap: its size on disk, or what it decodes to when that is larger. */
export function recordWeight(record: LoggedRecord): number {
  return Math.max(record.size, record.decodedSize)
}

/**
 * A batch stops growing once its records weigh this much (recordWeight: what they hold decoded), whatever they
 * carry: a recording body may be 25 MB, and ten thousand events of a megabyte each would be 10 GB. One record,
 * however heavy, always makes a batch.
 * The weights are those of the records read back from the log, so a batch rebuilt after a crash has the same bounds.
 */
export const MAX_BATCH_BYTES = 32 * 1024 * 1024

const MIN_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 10_000
/**
 * Failures of one batch, with a store that answers its ping, before the batch is split to find its poison when
 * the store never said the data is wrong: 8 failures are about 20 s of backoff, longer than a restarting store
 * takes to accept inserts again. (A definite rejection is split at once.)
 */
const SPLIT_AFTER_FAILURES = 8

export class Consumer {
  private cursor: number
  private reader: WalReader
  private pending: Batch | null = null
  private failures = 0
  private inDoubtThrough: number
  private running: Promise<void> | null = null
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopped = false
  private lastError: string | null = null
  private lastBatchFull = false
  /** events (before normalisation drops) this consumer has finished since it started */
  consumedItems = 0
  /** when the cursor last moved (or the consumer started), epoch ms */
  lastAdvanceAt = Date.now()
  /** events isolated as poison since start */
  isolatedEvents = 0
  /** the log lines of an outage: its start, a summary a minute, its end and the drain after it */
  readonly outage: OutageWatch

  constructor(
    private readonly deps: ConsumerDeps,
    private readonly handler: BatchHandler,
  ) {
    // A consumer new to this log starts at its oldest record.
    this.cursor = Math.max(deps.checkpoint.done(handler.name), deps.wal.firstSeq - 1)
    this.inDoubtThrough = Math.max(deps.checkpoint.attempting(handler.name), this.cursor)
    this.reader = new WalReader(deps.wal, this.cursor + 1)
    this.outage = new OutageWatch({
      consumer: handler.name,
      store: handler.store ?? handler.name,
      log: deps.log,
      summaryEveryMs: deps.outageSummaryMs,
      backlog: () => ({
        records: Math.max(0, deps.wal.lastSeq - this.cursor),
        events: deps.waitingEvents?.(this.consumedItems),
        oldestReceivedAt: this.pending?.records[0]?.receivedAt || undefined,
      }),
      finished: () => ({ records: this.cursor, events: this.consumedItems }),
    })
  }

  get name(): string {
    return this.handler.name
  }

  /** The store this consumer writes to. */
  get store(): string {
    return this.handler.store ?? this.handler.name
  }

  /** Last sequence number handed over and handled (some of it may be held by the handler, see heldFrom). */
  get position(): number {
    return this.cursor
  }

  /** Last sequence number whose effects are stored: what the log may release. */
  get durablePosition(): number {
    const held = this.handler.heldFrom?.() ?? null
    return held === null ? this.cursor : Math.min(this.cursor, held - 1)
  }

  /** What is failing now, store first ("clickhouse unreachable: connect ECONNREFUSED …"), or null. */
  get failing(): string | null {
    if (this.failures === 0) return null
    const outage = this.outage.describe()
    return outage ? `${outage.store} ${outage.reason}: ${this.lastError}` : this.lastError
  }

  start(): void {
    this.schedule(this.deps.intervalMs)
  }

  /** Run now (e.g. enough events are waiting). */
  kick(): void {
    if (this.failures > 0 || this.stopped) return
    if (!this.running) {
      clearTimeout(this.timer)
      this.run()
    }
  }

  private schedule(ms: number): void {
    if (this.stopped) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => this.run(), ms)
  }

  private run(): void {
    if (this.running || this.stopped) return
    this.running = this.step()
      .catch((error) => this.deps.log.error({ err: error, consumer: this.name }, 'consumer step crashed'))
      .finally(() => {
        this.running = null
        if (this.stopped) return
        if (this.failures > 0) {
          const backoff = Math.min(MAX_BACKOFF_MS, MIN_BACKOFF_MS * 2 ** (this.failures - 1))
          this.schedule(backoff * (0.75 + Math.random() * 0.5))
        } else if (this.deps.wal.lastSeq > this.cursor && this.lastBatchFull) {
          this.schedule(0) // a full batch: more is waiting (e.g. replay after a restart)
        } else {
          this.schedule(this.deps.intervalMs)
        }
      })
  }

  /** One batch: collect, hand over, advance. */
  private async step(): Promise<void> {
    const batch = this.pending ?? this.collect()
    if (!batch) return this.idle(false)
    this.pending = batch
    const inDoubt = this.failures > 0 || batch.firstSeq <= this.inDoubtThrough
    try {
      await this.handler.handle(batch, inDoubt)
    } catch (error) {
      this.failures++
      this.lastError = (error as Error)?.message ?? String(error)
      this.deps.onFailure?.(this.name, reasonOf(error))
      const definite = this.handler.rejects?.(error) === true
      // a store refusing a batch's data is not an outage: the batch is split at once (its log line says so)
      if (!definite) this.outage.failed(error)
      const refused = definite || (this.failures >= SPLIT_AFTER_FAILURES && !this.handler.selfIsolating && (await this.storeAnswers()))
      if (!refused) return
      try {
        const isolated = await isolatePoison(batch, {
          handler: this.handler,
          isDefinite: (e) => this.handler.rejects?.(e) === true,
          storeAnswers: () => this.storeAnswers(),
          poison: this.deps.poison,
        })
        this.isolatedEvents += isolated
        this.deps.log.warn({ consumer: this.name, isolated, firstSeq: batch.firstSeq, lastSeq: batch.lastSeq }, 'batch split: poison events dead-lettered, the rest handled')
      } catch (splitError) {
        this.lastError = (splitError as Error)?.message ?? String(splitError)
        this.outage.failed(splitError)
        return // the store went down meanwhile: retry the whole batch, in doubt
      }
    }
    this.outage.succeeded()
    this.failures = 0
    this.lastError = null
    this.pending = null
    this.cursor = batch.lastSeq
    this.saveDurable()
    this.lastAdvanceAt = Date.now()
    this.consumedItems += batch.items
    this.lastBatchFull = batch.events >= this.deps.maxEvents
    if (this.cursor >= this.deps.wal.lastSeq) this.outage.caughtUp()
    this.deps.onProgress()
  }

  private saveDurable(): void {
    const durable = this.durablePosition
    if (durable > this.deps.checkpoint.done(this.name)) {
      this.deps.checkpoint.update((s) => {
        s.done[this.name] = durable
      })
    }
  }

  /** No batch waiting: let a handler that holds rows write them when due (a failure backs off like a batch's). */
  private async idle(force: boolean): Promise<void> {
    if (!this.handler.idle) return
    try {
      if (!(await this.handler.idle(force))) return
    } catch (error) {
      this.failures++
      this.lastError = (error as Error)?.message ?? String(error)
      this.deps.onFailure?.(this.name, reasonOf(error))
      if (this.failures === 1 || this.failures % 20 === 0) this.deps.log.warn({ err: error, consumer: this.name, attempts: this.failures }, 'held rows failed; will retry')
      return
    }
    this.failures = 0
    this.lastError = null
    this.saveDurable()
    this.deps.onProgress()
  }

  private async storeAnswers(): Promise<boolean> {
    try {
      return await this.handler.probe()
    } catch {
      return false
    }
  }

  /** The next records after the cursor, from the ring where it has them and from the log otherwise. */
  private collect(): Batch | null {
    let last = this.deps.wal.lastSeq
    // After a crash, the batch whose insert may have landed is rebuilt with the same bounds: the identical
    // block, which the store's deduplication (by content, or by its token) recognises even when a check for
    // what landed read a lagging replica.
    if (this.inDoubtThrough > this.cursor) last = Math.min(last, this.inDoubtThrough)
    if (last <= this.cursor) return null
    const records: LoggedRecord[] = []
    let events = 0
    let items = 0
    let bytes = 0
    // session recordings carry no events: each counts as one against the batch's size
    let recordings = 0
    let seq = this.cursor + 1
    while (seq <= last && (records.length === 0 || (events + recordings < this.deps.maxEvents && bytes < MAX_BATCH_BYTES))) {
      let record = this.deps.ring.get(seq)
      if (record) {
        this.reader.seek(seq + 1)
      } else {
        this.reader.seek(seq)
        const raw = this.reader.next()
        if (!raw) break
        record = this.deps.replay(raw)
        this.deps.ring.push(record) // for the other consumers
      }
      records.push(record)
      events += record.events.length
      items += record.events.length
      for (const n of record.dropped.values()) items += n
      bytes += recordWeight(record)
      if (record.recording !== undefined) recordings++
      seq++
    }
    if (records.length === 0) return null
    return { records, firstSeq: records[0].seq, lastSeq: records[records.length - 1].seq, events, items, bytes }
  }

  /** Finish the batch in flight and stop. */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.outage.stop()
    await this.running
    this.reader.close()
  }

  /** Work until caught up with the log (or the deadline passes); used when draining. */
  async catchUp(deadline: number): Promise<boolean> {
    while (!this.stopped && this.cursor < this.deps.wal.lastSeq && Date.now() < deadline) {
      if (this.running) await this.running
      else {
        clearTimeout(this.timer)
        this.running = this.step().finally(() => {
          this.running = null
        })
        await this.running
        if (this.failures > 0) await Bun.sleep(Math.min(1000, MIN_BACKOFF_MS * 2 ** this.failures))
      }
    }
    // what a handler holds is written before the drain ends
    while (!this.stopped && this.handler.heldFrom?.() != null && Date.now() < deadline) {
      if (this.running) await this.running
      await this.idle(true)
      if (this.failures > 0) await Bun.sleep(Math.min(1000, MIN_BACKOFF_MS * 2 ** this.failures))
    }
    return this.durablePosition >= this.deps.wal.lastSeq
  }
}
