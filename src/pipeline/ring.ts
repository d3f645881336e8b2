// Decoded records held in the flush worker's memory, keyed by log sequence number, so that what one
// consumer decoded from the log the others reuse. It holds one contiguous run of sequence numbers and is
// bounded; a record left out stays in the log and is decoded again by whoever needs it.
import type { CapturedEvent, DropReason } from '../capture/normalize'

export interface LoggedRecord {
  seq: number
  projectId: number
  receivedAt: number
  events: CapturedEvent[]
  /** events the request carried that normalisation dropped, by reason (docs/compatibility.md#dropped-events) */
  dropped: Map<DropReason, number>
  /** bytes in the log */
  size: number
  /** characters of decoded JSON: what the record costs in memory (a compressed log record may expand 100×) */
  decodedSize: number
  /** every string of its events, keys included, is known to be acceptable to Postgres as it is (db/text.ts) */
  wellFormed?: boolean
  /** a session recording's blocks (no events): what the recording writer stores (src/replay/writer.ts) */
  recording?: unknown
}

export class Ring {
  private entries: (LoggedRecord | undefined)[] = []
  private head = 0
  private events = 0
  private bytes = 0

  /**
   * Bounded in events and in decoded size: what the records hold in memory, not what they took in the log
   * (12 KB of lz64 can decode to 19 MB), so a few huge requests cannot fill memory.
   */
  constructor(
    private readonly maxEvents: number,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  get eventCount(): number {
    return this.events
  }

  get length(): number {
    return this.entries.length - this.head
  }

  private get firstSeq(): number {
    return this.entries[this.head]!.seq
  }

  /** Keep the record if it extends the run and fits; false means consumers must read it from the log. */
  push(record: LoggedRecord): boolean {
    const n = this.length
    if (n > 0) {
      const last = this.entries[this.entries.length - 1]!
      if (record.seq !== last.seq + 1) return false
      if (this.events + record.events.length > this.maxEvents) return false
      if (this.bytes + record.decodedSize > this.maxBytes) return false
    } else if (record.decodedSize > this.maxBytes) {
      return false
    }
    this.entries.push(record)
    this.events += record.events.length
    this.bytes += record.decodedSize
    return true
  }

  get(seq: number): LoggedRecord | undefined {
    if (this.length === 0) return undefined
    const i = this.head + (seq - this.firstSeq)
    return i >= this.head && i < this.entries.length ? this.entries[i] : undefined
  }

  /** Forget records every consumer has finished. */
  evictThrough(seq: number): void {
    while (this.head < this.entries.length && this.entries[this.head]!.seq <= seq) {
      this.events -= this.entries[this.head]!.events.length
      this.bytes -= this.entries[this.head]!.decodedSize
      this.entries[this.head] = undefined
      this.head++
    }
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head)
      this.head = 0
    }
  }
}
