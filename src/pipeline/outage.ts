// What an operator reads when a consumer's store is down: one line when the outage starts (which store, why),
// a summary every minute while it lasts (attempts, backlog, age of the oldest record waiting), one line when
// the store takes a batch again (how long it was down) and one when the backlog it left is drained (how much,
// how long). Every line carries `outage` (started | ongoing | ended | drained), `consumer` and `store`, so a
// log query finds them all.
import type { Logger } from '../log'
import { reasonOf } from './isolate'

export interface Backlog {
  /** log records (requests) this consumer has not finished */
  records: number
  /** events accepted and not yet finished by this consumer, where known */
  events?: number
  /** when the oldest record this consumer has not finished was received (epoch ms), where known */
  oldestReceivedAt?: number
}

export interface OutageWatchOptions {
  consumer: string
  /** the store the consumer writes to: clickhouse, embedded, postgres */
  store: string
  log: Logger
  backlog(): Backlog
  /** the consumer's position, in records and events finished, to measure what a drain took */
  finished(): { records: number; events: number }
  summaryEveryMs?: number
  now?(): number
}

export const OUTAGE_SUMMARY_MS = 60_000

interface Outage {
  startedAt: number
  attempts: number
  reason: string
  lastError: string
}

interface Drain {
  outageMs: number
  endedAt: number
  from: { records: number; events: number }
}

export class OutageWatch {
  private outage: Outage | null = null
  private drain: Drain | null = null
  private summary: ReturnType<typeof setInterval> | undefined
  private readonly now: () => number

  constructor(private readonly options: OutageWatchOptions) {
    this.now = options.now ?? Date.now
  }

  /** Whether a batch is failing now. */
  get active(): boolean {
    return this.outage !== null
  }

  /** Fields describing the backlog now, for a log line. */
  private backlogFields(): Record<string, number> {
    const b = this.options.backlog()
    const out: Record<string, number> = { backlogRecords: b.records }
    if (b.events !== undefined) out.backlogEvents = b.events
    if (b.oldestReceivedAt) out.oldestRecordAgeSeconds = Math.max(0, Math.round((this.now() - b.oldestReceivedAt) / 1000))
    return out
  }

  private get subject(): Record<string, string> {
    return { consumer: this.options.consumer, store: this.options.store }
  }

  /** A batch failed (and will be retried). */
  failed(error: unknown): void {
    const reason = reasonOf(error)
    const lastError = (error as Error)?.message ?? String(error)
    if (this.outage) {
      this.outage.attempts++
      this.outage.reason = reason
      this.outage.lastError = lastError
      return
    }
    this.drain = null // a new outage during a drain: its own end will report the drain
    this.outage = { startedAt: this.now(), attempts: 1, reason, lastError }
    this.options.log.warn(
      { outage: 'started', ...this.subject, reason, err: error, ...this.backlogFields() },
      `${this.options.store} outage started (${reason}): the ${this.options.consumer} consumer retries with backoff, events wait in the write-ahead log`,
    )
    const every = this.options.summaryEveryMs ?? OUTAGE_SUMMARY_MS
    this.summary = setInterval(() => this.summarise(), every)
    ;(this.summary as { unref?: () => void }).unref?.()
  }

  private summarise(): void {
    const o = this.outage
    if (!o) return
    this.options.log.warn(
      {
        outage: 'ongoing',
        ...this.subject,
        reason: o.reason,
        lastError: o.lastError,
        downSeconds: Math.round((this.now() - o.startedAt) / 1000),
        attempts: o.attempts,
        ...this.backlogFields(),
      },
      `${this.options.store} still failing (${o.reason}) after ${Math.round((this.now() - o.startedAt) / 1000)} s`,
    )
  }

  /** A batch succeeded: ends an outage, if there was one. */
  succeeded(): void {
    const o = this.outage
    if (!o) return
    clearInterval(this.summary)
    this.outage = null
    const endedAt = this.now()
    const outageMs = endedAt - o.startedAt
    this.drain = { outageMs, endedAt, from: this.options.finished() }
    this.options.log.info(
      { outage: 'ended', ...this.subject, reason: o.reason, downSeconds: round1(outageMs / 1000), attempts: o.attempts + 1, ...this.backlogFields() },
      `${this.options.store} outage over after ${round1(outageMs / 1000)} s (${o.attempts} failed attempts); draining the backlog`,
    )
  }

  /** The consumer has nothing left to do: ends a drain, if one was under way. */
  caughtUp(): void {
    const d = this.drain
    if (!d) return
    this.drain = null
    const now = this.options.finished()
    const records = now.records - d.from.records
    const events = now.events - d.from.events
    const drainMs = this.now() - d.endedAt
    this.options.log.info(
      { outage: 'drained', ...this.subject, drainedRecords: records, drainedEvents: events, drainSeconds: round1(drainMs / 1000), downSeconds: round1(d.outageMs / 1000) },
      `${this.options.store} backlog drained: ${events} events (${records} requests) in ${round1(drainMs / 1000)} s after a ${round1(d.outageMs / 1000)} s outage`,
    )
  }

  /** Current state, for the exit log and /_ready: the failing store and why, or null. */
  describe(): { store: string; reason: string; error: string; downSeconds: number; attempts: number } | null {
    const o = this.outage
    if (!o) return null
    return { store: this.options.store, reason: o.reason, error: o.lastError, downSeconds: Math.round((this.now() - o.startedAt) / 1000), attempts: o.attempts }
  }

  stop(): void {
    clearInterval(this.summary)
  }
}

function round1(n: number): number {
  return Math.round(n * 10) / 10
}
