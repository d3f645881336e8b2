// Which event names the flusher must write to event_definitions: a name is written when first seen and then
// at most once an hour (last_seen_at), so a hot event name costs nothing. The memo is bounded; a name it
// has forgotten is simply written again (which also re-creates a definition deleted through the API).

const HOUR_MS = 60 * 60 * 1000
// PostHog's definitions ingestion skips these, and names longer than 200 bytes.
const SKIPPED = new Set(['$$plugin_metrics'])
const MAX_NAME_BYTES = 200

export interface DefinitionSighting {
  teamId: number
  name: string
  /** when it was seen: the time the service received the event */
  seenAt: number
}

export class DefinitionTracker {
  private readonly written = new Map<string, number>()

  constructor(private readonly maxNames = 100_000) {}

  /** The sightings of a batch that need a write (one per name, the latest time). */
  due(sightings: Iterable<DefinitionSighting>): DefinitionSighting[] {
    const latest = new Map<string, DefinitionSighting>()
    for (const s of sightings) {
      if (SKIPPED.has(s.name) || Buffer.byteLength(s.name) > MAX_NAME_BYTES) continue
      const key = `${s.teamId}\u0000${s.name}`
      const known = latest.get(key)
      if (!known || known.seenAt < s.seenAt) latest.set(key, s)
    }
    const due: DefinitionSighting[] = []
    for (const [key, s] of latest) {
      const hour = Math.floor(s.seenAt / HOUR_MS)
      if (this.written.get(key) === hour) continue
      due.push(s)
    }
    return due
  }

  /** Remember what was written, once the write succeeded. */
  remember(written: DefinitionSighting[]): void {
    for (const s of written) {
      const key = `${s.teamId}\u0000${s.name}`
      this.written.delete(key) // re-insert: Map order is recency order for eviction
      this.written.set(key, Math.floor(s.seenAt / HOUR_MS))
      if (this.written.size > this.maxNames) this.written.delete(this.written.keys().next().value!)
    }
  }
}
