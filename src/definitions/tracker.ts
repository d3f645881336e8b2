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

  /** The sightings of a batch that need a write (one per name, the latest time; in the order names first came). */
  due(sightings: Iterable<DefinitionSighting>): DefinitionSighting[] {
    // per project and name, where its latest sighting is in `latest` (-1: a name never written): a batch gives one
    // sighting per event, and no key text is made for each
    const places = new Map<number, Map<string, number>>()
    const latest: DefinitionSighting[] = []
    for (const s of sightings) {
      let names = places.get(s.teamId)
      if (!names) places.set(s.teamId, (names = new Map()))
      const at = names.get(s.name)
      if (at === undefined) {
        const skipped = SKIPPED.has(s.name) || Buffer.byteLength(s.name) > MAX_NAME_BYTES
        names.set(s.name, skipped ? -1 : latest.length)
        if (!skipped) latest.push(s)
      } else if (at >= 0 && latest[at].seenAt < s.seenAt) {
        latest[at] = s
      }
    }
    const due: DefinitionSighting[] = []
    for (const s of latest) {
      const hour = Math.floor(s.seenAt / HOUR_MS)
      if (this.written.get(`${s.teamId}\u0000${s.name}`) === hour) continue
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
