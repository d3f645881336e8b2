// Counters the hot paths increment on every request, counted in plain numbers and handed to prom-client when it
// is read. prom-client's own children (`counter.labels(...).inc()`) build their label string and look it up in the
// counter's table on every increment: two of those were a measurable share of a /decide and of a capture request.
import type { Counter } from 'prom-client'

export interface Tally {
  inc(by?: number): void
}

type Labels<L extends string> = Partial<Record<L, string | number>>

class PendingTally<L extends string> implements Tally {
  count = 0
  constructor(readonly labels: Labels<L>) {}
  inc(by = 1): void {
    this.count += by
  }
}

/**
 * One counter's label sets, each with a tally the caller may keep. What the tallies hold is added to the counter
 * whenever it is read (its `collect`, which prom-client runs for /metrics and for `get()`), so every reader sees
 * every increment. At most `maxLabelSets` sets are kept: past them (a client inventing HTTP methods), increments
 * go to the counter directly — still counted, at prom-client's cost.
 */
export class TalliedCounter<L extends string> {
  private readonly tallies = new Map<string, PendingTally<L>>()

  constructor(
    private readonly counter: Counter<L>,
    private readonly maxLabelSets = 512,
  ) {
    const target = counter as unknown as { collect?: () => unknown }
    const earlier = target.collect
    target.collect = () => {
      this.settle()
      return earlier?.call(counter)
    }
  }

  /** The tally of a label set, found by `key` (which must name the set: the caller builds it from the labels). */
  of(key: string, labels: Labels<L>): Tally {
    const known = this.tallies.get(key)
    if (known !== undefined) return known
    if (this.tallies.size >= this.maxLabelSets) return { inc: (by = 1) => this.counter.inc(labels as never, by) }
    const tally = new PendingTally(labels)
    this.tallies.set(key, tally)
    return tally
  }

  /** Hands what the tallies counted to the counter. */
  settle(): void {
    for (const tally of this.tallies.values()) {
      if (tally.count === 0) continue
      this.counter.inc(tally.labels as never, tally.count)
      tally.count = 0
    }
  }
}
