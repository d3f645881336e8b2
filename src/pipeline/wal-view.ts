// The flush worker's view of the log the capture thread writes: the segment list (sent on change) and
// how far the active segment is written (read from shared counters).
import type { Segment, WalSource } from './wal-reader'
import type { SharedCounters } from './shared-counters'

export class WalView implements WalSource {
  private segments: Segment[] = []

  constructor(private readonly counters: SharedCounters) {}

  get lastSeq(): number {
    return this.counters.lastSeq
  }

  get firstSeq(): number {
    return this.segments[0]?.firstSeq ?? this.counters.lastSeq + 1
  }

  update(segments: Segment[]): void {
    this.segments = segments
  }

  locate(seq: number): Segment | null {
    const last = this.segments[this.segments.length - 1]
    if (last && last.firstSeq === this.counters.activeFirstSeq) {
      // the active segment grows without messages: take its extent from the shared counters
      last.size = Math.max(last.size, this.counters.activeSize)
      last.lastSeq = Math.max(last.lastSeq, this.counters.lastSeq)
    }
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const s = this.segments[i]
      if (s.firstSeq <= seq) return seq <= s.lastSeq ? s : null
    }
    return null
  }
}
