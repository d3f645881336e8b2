// An event's uuid is its identity: a second event reusing a uuid in the same project is a duplicate. The store
// would drop it (the embedded store's unique key) or collapse it later (ClickHouse's ReplacingMergeTree), but the
// learner would still make persons and definitions of it, and /metrics would count it as stored. This window
// decides once, when a logged record becomes events in the flush worker: the first event holding a
// (project, uuid) keeps it, later ones are dropped and counted as `duplicate_uuid`.
//
// The window is bounded (two generations of at most `perGeneration` keys each): a uuid reused after more than
// that many other events is no longer recognised here (the embedded store still refuses it; see
// docs/compatibility.md#event-uuid). Decoding the same record again (a retried batch, a ring miss) gives the
// same answer, because the holder of a key is the record's sequence number, not a flag.
import type { LoggedRecord } from './ring'

export const RECENT_UUIDS_PER_GENERATION = 100_000

export class RecentUuids {
  private current = new Map<string, number>()
  private previous = new Map<string, number>()

  constructor(private readonly perGeneration = RECENT_UUIDS_PER_GENERATION) {}

  /** Drop the events of the record whose (project, uuid) an earlier event holds; counted in `record.dropped`. */
  filter(record: LoggedRecord): LoggedRecord {
    let duplicates = 0
    const inRecord = new Set<string>()
    const kept = record.events.filter((e) => {
      const key = `${record.projectId}:${e.uuid}`
      if (inRecord.has(key)) {
        duplicates++
        return false
      }
      inRecord.add(key)
      const holder = this.holderOf(key)
      if (holder !== undefined && holder !== record.seq) {
        duplicates++
        return false
      }
      if (holder === undefined) this.hold(key, record.seq)
      return true
    })
    if (duplicates === 0) return record
    record.dropped.set('duplicate_uuid', (record.dropped.get('duplicate_uuid') ?? 0) + duplicates)
    return { ...record, events: kept }
  }

  private holderOf(key: string): number | undefined {
    return this.current.get(key) ?? this.previous.get(key)
  }

  private hold(key: string, seq: number): void {
    if (this.current.size >= this.perGeneration) {
      this.previous = this.current
      this.current = new Map()
    }
    this.current.set(key, seq)
  }
}
