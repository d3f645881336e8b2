// What ingestion teaches about properties, and which of it the learner must write. Pure (no I/O).
//
// From each event (PostHog's rules): every top-level property key is an event property, except $set, $set_once,
// $unset, $groups and $group_0…$group_4; every key of $set and $set_once is a person property (personless events,
// `$process_person_profile: false`, teach none, as they carry no person changes); $groupidentify teaches only the
// keys of $group_set, as properties of its group type. Each event property also records the (event, property)
// pair. Names and keys over 200 bytes are not learned, nor anything from an event with more than 10,000 keys;
// a batch plans at most 200,000 writes (the rest is learned when seen again).
//
// Cost on hot keys: a key already written this hour with a type is skipped before its value is even looked at, and
// an event with the same keys as the last one of its name that taught nothing is passed over whole. A key written
// without a type (null, an object, an array) is written again as soon as a value gives it one: the memo never stands
// in the way of that fill. Everything is written again once an hour, so a definition deleted through the API (or a
// type cleared) comes back within the hour the key is next seen. The memo is bounded in bytes: two generations, the
// older dropped when the younger fills.
import { detectPropertyType, type PropertyType } from './property-types'

export type LearnedKind = 'event' | 'person' | 'group'

export interface LearnedProperty {
  teamId: number
  kind: LearnedKind
  /** the group type's name (kind group); the learner resolves it to its index */
  groupType: string | null
  name: string
  type: PropertyType | null
  /** the memo's scope and hour, to remember it once written */
  scope: string
  hour: number
}

export interface LearnedPair {
  teamId: number
  event: string
  property: string
  scope: string
  hour: number
}

const HOUR_MS = 60 * 60 * 1000
const MAX_NAME_BYTES = 200
/** Past this many keys an event teaches no properties (PostHog skips events with more than 10,000 updates). */
export const MAX_KEYS_PER_EVENT = 10_000
/**
 * New definitions and pairs one batch may plan (some 100 bytes each): past it, keys not yet planned are left for a
 * later batch that sees them again, so a batch of events full of distinct keys cannot take the memory it likes.
 */
export const MAX_PLANNED_PER_BATCH = 200_000
const SKIPPED_EVENTS = new Set(['$$plugin_metrics'])
const NOT_EVENT_PROPERTIES = new Set(['$set', '$set_once', '$unset', '$groups', '$group_0', '$group_1', '$group_2', '$group_3', '$group_4'])
/** A name of at most this many UTF-16 units is at most 200 bytes in UTF-8 (3 bytes per unit at most). */
const SURELY_SHORT = Math.floor(MAX_NAME_BYTES / 3)
/** What a memo entry costs beyond its text: map slot, number, string header (an estimate, on the high side). */
const ENTRY_OVERHEAD_BYTES = 64

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function fits(name: string): boolean {
  return name.length <= SURELY_SHORT || (name.length <= MAX_NAME_BYTES && Buffer.byteLength(name) <= MAX_NAME_BYTES)
}

/** Memo entries are numbers: the hour of the write, times two, plus one when the written type was not null. */
const entry = (hour: number, typed: boolean) => hour * 2 + (typed ? 1 : 0)

/** scope → name → entry, in two generations bounded together by `maxBytes`. */
class Memo {
  private young = new Map<string, Map<string, number>>()
  private old = new Map<string, Map<string, number>>()
  private youngBytes = 0
  /** how often the younger generation became the older */
  turns = 0

  constructor(private readonly maxBytes: number) {}

  /** The entries of one scope, looked up once for all the keys of an event. */
  scope(scope: string): ScopeView {
    return new ScopeView(this, scope, this.young.get(scope), this.old.get(scope))
  }

  set(scope: string, name: string, value: number): void {
    let names = this.young.get(scope)
    if (!names) {
      this.young.set(scope, (names = new Map()))
      this.youngBytes += scope.length * 2 + ENTRY_OVERHEAD_BYTES
    }
    if (!names.has(name)) this.youngBytes += name.length * 2 + ENTRY_OVERHEAD_BYTES
    names.set(name, value)
    if (this.youngBytes > this.maxBytes / 2) {
      this.old = this.young
      this.young = new Map()
      this.youngBytes = 0
      this.turns++
    }
  }
}

class ScopeView {
  constructor(
    private readonly memo: Memo,
    private readonly scope: string,
    private readonly young: Map<string, number> | undefined,
    private readonly old: Map<string, number> | undefined,
  ) {}

  get(name: string): number | undefined {
    const hit = this.young?.get(name)
    if (hit !== undefined) return hit
    const aged = this.old?.get(name)
    if (aged !== undefined) this.memo.set(this.scope, name, aged) // still in use: keep it past the next turn
    return aged
  }
}

export class PropertyTracker {
  private readonly memo: Memo

  /** `maxBytes`: about what the memo may hold (16 MiB: some 100,000 keys of 40 characters). */
  constructor(maxBytes = 16 * 1024 * 1024) {
    this.memo = new Memo(maxBytes)
  }

  /** A collection of one batch's properties; `nowMs` is the time the six-month timestamp rule counts from. */
  batch(nowMs: number): PropertyBatch {
    return new PropertyBatch(this.memo, nowMs)
  }

  /** Remember what was written, once the write succeeded. */
  remember(properties: Iterable<LearnedProperty>, pairs: Iterable<LearnedPair>): void {
    for (const p of properties) this.memo.set(p.scope, p.name, entry(p.hour, p.type !== null))
    for (const p of pairs) this.memo.set(p.scope, p.property, entry(p.hour, true))
  }
}

/** A project's memo scopes, as text made once a batch rather than for every event. */
interface TeamScopes {
  event: string
  person: string
  /** event name → the scope of its (event, property) pairs */
  pairs: Map<string, string>
}

/** The keys of an event found settled, in the hour and memo generation it was found so. */
interface Settled {
  hour: number
  turns: number
  keys: string[]
}

function sameKeys(a: string[], b: string[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

export class PropertyBatch {
  private readonly teams = new Map<number, TeamScopes>()
  /**
   * Pair scope → the last event of that name whose every key had its definition and its pair written this hour with
   * a type: learning from it changed nothing. An event of the same name with the same keys (the next of a client's
   * identical events), in the same hour with no turn of the memo since, would find the same and is passed over.
   */
  private readonly settled = new Map<string, Settled>()
  /** scope → name → what this batch will write */
  private readonly pending = new Map<string, Map<string, LearnedProperty>>()
  private readonly pairScopes = new Map<string, Map<string, LearnedPair>>()
  private readonly order: LearnedProperty[] = []
  private readonly pairOrder: LearnedPair[] = []

  constructor(
    private readonly memo: Memo,
    private readonly nowMs: number,
  ) {}

  /** Learn from one event of project `teamId`, received at `receivedAt`. */
  add(teamId: number, receivedAt: number, event: string, properties: Record<string, unknown>): void {
    if (SKIPPED_EVENTS.has(event) || !fits(event)) return
    const hour = Math.floor(receivedAt / HOUR_MS)
    if (event === '$groupidentify') {
      const type = properties.$group_type
      const set = properties.$group_set
      if (typeof type !== 'string' || type.length === 0 || type.length > 400 || !isObject(set)) return
      const keys = Object.keys(set)
      if (keys.length > MAX_KEYS_PER_EVENT) return
      this.learn(teamId, 'group', type, `${teamId}\u0000g\u0000${type}`, hour, set, keys)
      return
    }
    const keys = Object.keys(properties)
    const personal = properties.$process_person_profile !== false
    const set = personal && isObject(properties.$set) ? properties.$set : null
    const setOnce = personal && isObject(properties.$set_once) ? properties.$set_once : null
    const setKeys = set ? Object.keys(set) : []
    const setOnceKeys = setOnce ? Object.keys(setOnce) : []
    if (keys.length + setKeys.length + setOnceKeys.length > MAX_KEYS_PER_EVENT) return
    const scopes = this.scopesOf(teamId)
    let pairScope = scopes.pairs.get(event)
    if (pairScope === undefined) scopes.pairs.set(event, (pairScope = `${teamId}\u0000x\u0000${event}`))
    const last = this.settled.get(pairScope)
    if (!last || last.hour !== hour || last.turns !== this.memo.turns || !sameKeys(last.keys, keys)) {
      const turns = this.memo.turns
      if (this.learn(teamId, 'event', null, scopes.event, hour, properties, keys, event, pairScope)) this.settled.set(pairScope, { hour, turns, keys })
    }
    if (set) this.learn(teamId, 'person', null, scopes.person, hour, set, setKeys)
    if (setOnce) this.learn(teamId, 'person', null, scopes.person, hour, setOnce, setOnceKeys)
  }

  private scopesOf(teamId: number): TeamScopes {
    let scopes = this.teams.get(teamId)
    if (!scopes) this.teams.set(teamId, (scopes = { event: `${teamId}\u0000e`, person: `${teamId}\u0000p`, pairs: new Map() }))
    return scopes
  }

  /** Definitions to write, in first-seen order (the first typed value of the batch for each). */
  definitions(): LearnedProperty[] {
    return this.order
  }

  pairs(): LearnedPair[] {
    return this.pairOrder
  }

  private full(): boolean {
    return this.order.length + this.pairOrder.length >= MAX_PLANNED_PER_BATCH
  }

  /** True when every key was settled: its definition (and pair) written this hour with a type. */
  private learn(
    teamId: number,
    kind: LearnedKind,
    groupType: string | null,
    scope: string,
    hour: number,
    values: Record<string, unknown>,
    keys: string[],
    event?: string,
    pairScope?: string,
  ): boolean {
    let pending = this.pending.get(scope)
    const known = this.memo.scope(scope)
    const knownPairs = pairScope === undefined ? undefined : this.memo.scope(pairScope)
    let settled = true
    for (const name of keys) {
      if (kind === 'event' && NOT_EVENT_PROPERTIES.has(name)) continue
      if (!fits(name)) continue
      if (knownPairs !== undefined && knownPairs.get(name) !== entry(hour, true)) {
        settled = false
        this.pair(teamId, event!, pairScope!, name, hour)
      }
      const written = known.get(name)
      // written this hour with a type: nothing left to learn (the first type sticks)
      if (written === entry(hour, true)) continue
      settled = false
      const planned = pending?.get(name)
      if (planned && planned.type !== null) continue
      const type = detectPropertyType(name, values[name], this.nowMs)
      if (planned) {
        if (type !== null) planned.type = type
        continue
      }
      // written this hour without a type, and still none: nothing new
      if (written === entry(hour, false) && type === null) continue
      if (this.full()) continue
      if (!pending) this.pending.set(scope, (pending = new Map()))
      const learned: LearnedProperty = { teamId, kind, groupType, name, type, scope, hour }
      pending.set(name, learned)
      this.order.push(learned)
    }
    return settled
  }

  private pair(teamId: number, event: string, scope: string, property: string, hour: number): void {
    let planned = this.pairScopes.get(scope)
    if (planned?.has(property) || this.full()) return
    if (!planned) this.pairScopes.set(scope, (planned = new Map()))
    const pair: LearnedPair = { teamId, event, property, scope, hour }
    planned.set(property, pair)
    this.pairOrder.push(pair)
  }
}
