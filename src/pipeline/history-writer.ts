// Events of other months (a backfill, a device whose clock says 1970) take a path of their own to the event
// store. ClickHouse makes one part per month an insert touches: one /batch/ spread over 130 years made every
// flush write ~700 parts and cut everyone's ingestion 25-fold. The store writer keeps only the months around
// the time of receipt; this consumer of the log holds the other rows for a while, then writes them grouped by
// month, a bounded number of months per insert, so that many requests' rows of one month share one part.
//
// Held rows are not yet durable in the store: the consumer's checkpoint stays before the oldest record they
// came from (see heldFrom), so a crash replays those records, and the insert that follows is made in doubt
// (rows already stored are skipped by uuid).
import type { CapturedEvent } from '../capture/normalize'
import { StoreError, type StoredEvent } from '../events/store'
import type { Batch, BatchHandler } from './consumer'
import type { LoggedRecord } from './ring'
import { rowPropertiesText, storedEventOf, type EventWriterDeps } from './store-writer'

export const HISTORY_WRITER = 'store_history'

/** Whether events of other months take this path: on ClickHouse only (a part per month an insert touches). */
export function historyApart(eventStoreKind: string): boolean {
  return eventStoreKind === 'clickhouse'
}

/** The months of ClickHouse's partitions: years × 12 + month, in UTC. */
export function monthOf(ms: number): number {
  const d = new Date(ms)
  return d.getUTCFullYear() * 12 + d.getUTCMonth()
}

/**
 * Whether an event belongs on the historical path: its month is not the month it was received in, nor a
 * neighbour of it (clocks a little wrong across a month's end stay on the main path). Decided from what the
 * log holds (the event's timestamp, the record's time of receipt), so a replay decides the same.
 */
export function isHistorical(record: LoggedRecord, e: CapturedEvent): boolean {
  // the store writer asks this of every event: within 28 days no month can lie between the two (no month is
  // shorter), so nearly every event is answered without a Date
  if (Math.abs(e.timestamp - record.receivedAt) < MONTH_FREE_SPAN_MS) return false
  return Math.abs(monthOf(e.timestamp) - monthOf(record.receivedAt)) > 1
}

const MONTH_FREE_SPAN_MS = 28 * 86_400_000

export interface HistoryOptions {
  /** longest a row is held before it is written */
  holdMs: number
  /** rows held past which they are written at once */
  maxHeldRows: number
  /** bytes of properties held past which they are written at once */
  maxHeldBytes: number
  /** the most months (ClickHouse partitions, hence parts) one insert touches */
  monthsPerInsert: number
}

export const HISTORY_DEFAULTS: HistoryOptions = {
  holdMs: 10_000,
  maxHeldRows: 200_000,
  maxHeldBytes: 64 * 1024 * 1024,
  monthsPerInsert: 12,
}

export class HistoryWriter implements BatchHandler {
  readonly name = HISTORY_WRITER
  readonly selfIsolating = true

  /** named in the outage logs */
  get store(): string {
    return this.deps.events.kind
  }
  private held: StoredEvent[] = []
  private heldBytes = 0
  private heldSince = 0
  private heldFromSeq: number | null = null
  private heldInDoubt = false
  /** the last record whose rows were taken into `held` (a retried batch is not taken twice) */
  private takenThrough = 0

  private readonly options: HistoryOptions

  constructor(private readonly deps: EventWriterDeps & { options?: Partial<HistoryOptions> }) {
    this.options = { ...HISTORY_DEFAULTS, ...deps.options }
  }

  /** The oldest record whose rows are held but not written (the consumer's checkpoint stays before it). */
  heldFrom(): number | null {
    return this.heldFromSeq
  }

  async handle(batch: Batch, inDoubt: boolean): Promise<void> {
    if (batch.lastSeq > this.takenThrough) {
      for (const record of batch.records) {
        if (record.seq <= this.takenThrough) continue
        for (const e of record.events) {
          if (!isHistorical(record, e)) continue
          const row = storedEventOf(record, e, rowPropertiesText(this.deps, record, e))
          if (this.held.length === 0) {
            this.heldSince = Date.now()
            this.heldFromSeq = record.seq
          }
          this.held.push(row)
          this.heldBytes += row.properties.length
        }
      }
      this.takenThrough = batch.lastSeq
    }
    if (inDoubt) this.heldInDoubt = true
    await this.idle(false)
  }

  /** Write what is held when it is due (or now, when forced: a drain). True when rows were written. */
  async idle(force: boolean): Promise<boolean> {
    if (this.held.length === 0) return false
    const o = this.options
    const due = force || this.held.length >= o.maxHeldRows || this.heldBytes >= o.maxHeldBytes || Date.now() - this.heldSince >= o.holdMs
    if (!due) return false
    await this.flush()
    return true
  }

  private async flush(): Promise<void> {
    // before the insert: a crash from here on replays these records in doubt
    if (this.deps.checkpoint.attempting(this.name) < this.takenThrough) {
      this.deps.checkpoint.update((s) => {
        s.attempting[this.name] = this.takenThrough
      })
    }
    const byMonth = new Map<number, StoredEvent[]>()
    for (const row of this.held) {
      const m = monthOf(row.timestamp)
      const rows = byMonth.get(m)
      if (rows) rows.push(row)
      else byMonth.set(m, [row])
    }
    const months = [...byMonth.keys()].sort((a, b) => a - b)
    const inDoubt = this.heldInDoubt
    let written = 0
    let total = 0
    try {
      for (let i = 0; i < months.length; i += this.options.monthsPerInsert) {
        const rows = months.slice(i, i + this.options.monthsPerInsert).flatMap((m) => byMonth.get(m)!)
        written += await this.insertIsolating(rows, inDoubt)
        total += rows.length
      }
    } catch (error) {
      // part of it may have landed: the retry skips what is stored
      this.heldInDoubt = true
      throw error
    }
    const { metrics } = this.deps
    metrics.inc('flushedEvents', undefined, written)
    metrics.inc('events', { outcome: 'accepted' }, inDoubt ? total : written)
    if (!inDoubt && written < total) metrics.inc('events', { outcome: 'dropped_duplicate_uuid' }, total - written)
    this.deps.log.debug({ rows: total, months: months.length }, 'historical events written')
    this.held = []
    this.heldBytes = 0
    this.heldFromSeq = null
    this.heldInDoubt = false
  }

  /** Insert; rows the store refuses for good are found by halves and dead-lettered, the rest written. */
  private async insertIsolating(rows: StoredEvent[], inDoubt: boolean): Promise<number> {
    try {
      return await this.deps.events.insertBatch(rows, { inDoubt })
    } catch (error) {
      if (!(error instanceof StoreError) || error.transient) throw error
      if (rows.length === 1) {
        this.deps.deadLetters.write(rows, 'rejected_by_store', error.message, this.name)
        this.deps.metrics.inc('deadLettered', { consumer: this.name, reason: 'rejected_by_store' }, 1)
        this.deps.log.error({ err: error, consumer: this.name, uuid: rows[0]!.uuid }, 'historical event dead-lettered')
        return 0
      }
      const half = Math.ceil(rows.length / 2)
      return (await this.insertIsolating(rows.slice(0, half), inDoubt)) + (await this.insertIsolating(rows.slice(half), inDoubt))
    }
  }

  probe(): Promise<boolean> {
    return this.deps.events.health()
  }

  /** Refusals are isolated here, row by row; the consumer only ever retries. */
  rejects(): boolean {
    return false
  }
}
