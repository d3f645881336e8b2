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
import type { CapturedEvent } from '../capture/normalize'
import type { LoggedRecord } from './ring'
import { UuidKey, UuidTable } from './uuid-table'

export const RECENT_UUIDS_PER_GENERATION = 100_000

export class RecentUuids {
  private current: UuidTable
  private previous: UuidTable
  private readonly key = new UuidKey()
  /** bumped when the generations turn: a filter in progress then checks its own uuids exactly (see below) */
  private turns = 0

  constructor(private readonly perGeneration = RECENT_UUIDS_PER_GENERATION) {
    this.current = new UuidTable(perGeneration)
    this.previous = new UuidTable(0)
  }

  /**
   * Drop the events of the record whose (project, uuid) an earlier event holds; counted in `record.dropped`.
   *
   * Per event, one or two lookups in typed arrays (uuid-table.ts: no key text is built). A uuid repeated within the
   * record needs no set of its own: while the window has not turned, an earlier event's uuid is still in it, so its
   * repeat finds a holder: another record (dropped) or this one, and only then, or once the window turns, are this
   * record's earlier uuids gathered to tell a repeat from a replay of the same record.
   */
  filter(record: LoggedRecord): LoggedRecord {
    const events = record.events
    const seq = record.seq
    const turnsAtStart = this.turns
    let seen: Set<string> | null = null
    let kept: CapturedEvent[] | null = null
    for (let i = 0; i < events.length; i++) {
      const uuid = events[i]!.uuid
      let duplicate: boolean
      if (seen?.has(uuid)) {
        duplicate = true
      } else {
        const key = this.key.read(record.projectId, uuid)
        const holder = this.current.get(key) ?? this.previous.get(key)
        if (holder === undefined) {
          duplicate = false
          this.hold(key, seq)
        } else if (holder !== seq) {
          duplicate = true
        } else {
          // held by this record: a replay of it, or a repeat within it
          seen ??= uuidsOf(events, i)
          duplicate = seen.has(uuid)
        }
        if (seen === null && this.turns !== turnsAtStart) seen = uuidsOf(events, i)
        seen?.add(uuid)
      }
      if (duplicate) kept ??= events.slice(0, i)
      else kept?.push(events[i]!)
    }
    if (kept === null) return record
    const duplicates = events.length - kept.length
    record.dropped.set('duplicate_uuid', (record.dropped.get('duplicate_uuid') ?? 0) + duplicates)
    return { ...record, events: kept }
  }

  private hold(key: UuidKey, seq: number): void {
    if (this.current.size >= this.perGeneration) {
      this.previous = this.current
      this.current = new UuidTable(this.perGeneration)
      this.turns++
    }
    this.current.set(key, seq)
  }
}

/** The uuids of events[0, end). */
function uuidsOf(events: readonly CapturedEvent[], end: number): Set<string> {
  const uuids = new Set<string>()
  for (let i = 0; i < end; i++) uuids.add(events[i]!.uuid)
  return uuids
}
