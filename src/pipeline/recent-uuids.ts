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

export const RECENT_UUIDS_PER_GENERATION = 100_000

/** uuid → sequence number of the record holding it, per project. */
type Generation = Map<number, Map<string, number>>

export class RecentUuids {
  private current: Generation = new Map()
  private previous: Generation = new Map()
  /** keys in `current`, all projects together */
  private currentSize = 0
  /** bumped when the generations turn: a filter in progress then checks its own uuids exactly (see below) */
  private turns = 0

  constructor(private readonly perGeneration = RECENT_UUIDS_PER_GENERATION) {}

  /**
   * Drop the events of the record whose (project, uuid) an earlier event holds; counted in `record.dropped`.
   *
   * Per event, one or two lookups keyed by the uuid itself (no key text is built). A uuid repeated within the
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
        const holder = this.holderOf(record.projectId, uuid)
        if (holder === undefined) {
          duplicate = false
          this.hold(record.projectId, uuid, seq)
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

  private holderOf(projectId: number, uuid: string): number | undefined {
    return this.current.get(projectId)?.get(uuid) ?? this.previous.get(projectId)?.get(uuid)
  }

  private hold(projectId: number, uuid: string, seq: number): void {
    if (this.currentSize >= this.perGeneration) {
      this.previous = this.current
      this.current = new Map()
      this.currentSize = 0
      this.turns++
    }
    let uuids = this.current.get(projectId)
    if (!uuids) this.current.set(projectId, (uuids = new Map()))
    uuids.set(uuid, seq)
    this.currentSize++
  }
}

/** The uuids of events[0, end). */
function uuidsOf(events: readonly CapturedEvent[], end: number): Set<string> {
  const uuids = new Set<string>()
  for (let i = 0; i < end; i++) uuids.add(events[i]!.uuid)
  return uuids
}
