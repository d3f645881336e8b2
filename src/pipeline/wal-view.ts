// The flush worker's view of the log the capture thread writes: the segment list (sent on change) and
// how far the active segment is written (read from shared counters).
import type { Segment, WalSource } from './wal-reader'
import type { SharedCounters } from './shared-counters'

export class WalView implements WalSource {
  private segments: Segment[] = []

  constructor(private readonly counters: SharedCounters) {}

  get lastSeq(): number {
    this.counters.sync()
    return this.counters.lastSeq
  }

  get firstSeq(): number {
    return this.segments[0]?.firstSeq ?? this.lastSeq + 1
  }

  update(segments: Segment[]): void {
    this.segments = segments
  }

  /** The active segment grows without messages: its extent comes from the shared counters. */
  private refreshActive(): void {
    this.counters.sync()
    const last = this.segments[this.segments.length - 1]
    if (last && last.firstSeq === this.counters.activeFirstSeq) {
      last.size = Math.max(last.size, this.counters.activeSize)
      last.lastSeq = Math.max(last.lastSeq, this.counters.lastSeq)
    }
  }

  validBytes(segment: Segment): number {
    this.refreshActive()
    return segment.size
  }

  locate(seq: number): Segment | null {
    this.refreshActive()
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const s = this.segments[i]
      if (s.firstSeq <= seq) return seq <= s.lastSeq ? s : null
    }
    return null
  }
}
