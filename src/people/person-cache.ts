// The stored person and group properties /decide reads, kept in memory: a returning user's page load carries
// only a distinct id, so every flag with a person condition needs what ingestion stored. An LRU bounded in
// bytes; coherent because whoever writes persons says which distinct ids and groups changed (the flush worker
// of this process by message, those of other processes by NOTIFY, see person-changes.ts), and an entry also
// expires after `ttlMs` whatever happens. Concurrent misses for one key share one read; a read that was in
// flight when its key changed answers its own requests but is not kept.
import type { SizedPerson, SizedProperties, StoredProperties, StoredPropertiesRequest } from './stored-properties'

export type Properties = Record<string, unknown>

/** A person as /decide reads it: its properties (null: no such person) and the static cohorts it belongs to. */
export interface CachedPerson {
  properties: Properties | null
  staticCohorts: ReadonlySet<number>
}

type Cached = Properties | null | CachedPerson

/** What one batch of learning changed in a project. `all`: too much to list, forget the whole project. */
export interface PersonChange {
  teamId: number
  distinctIds: string[]
  groups: [number, string][]
  all?: boolean
  /** the persons of these distinct ids were erased (the learner must not take them for known any more) */
  deleted?: boolean
}

export interface PersonCacheOptions {
  maxBytes: number
  ttlMs: number
  onLookup?(outcome: 'hit' | 'miss'): void
}

export type StoredPropertiesLoader = (
  request: StoredPropertiesRequest,
) => Promise<{ person: SizedPerson | undefined; groups: Map<number, SizedProperties> }>

interface Entry {
  value: Cached
  bytes: number
  at: number
  /** when it last moved to the back (the count of moves and insertions then) */
  touched: number
}

interface Pending {
  promise: Promise<Cached>
  /** the key changed while this read was in flight: its answer must not be kept */
  stale: boolean
}

// A Map entry, its key and the Entry object: what an entry costs beyond its properties' text.
const ENTRY_OVERHEAD_BYTES = 160

const NO_COHORTS: ReadonlySet<number> = new Set()

const personKey = (teamId: number, distinctId: string) => `${teamId}\u0000p\u0000${distinctId}`
const groupKey = (teamId: number, index: number, key: string) => `${teamId}\u0000g${index}\u0000${key}`

export class PersonCache {
  private readonly entries = new Map<string, Entry>()
  /** moves and insertions so far: how far from the back an entry is, without looking */
  private touches = 0
  private readonly pending = new Map<string, Pending>()
  private bytes = 0

  constructor(
    private readonly load: StoredPropertiesLoader,
    private options: PersonCacheOptions,
  ) {}

  /** Serve entries for at most this long from now on (when no change feed reaches this process). */
  limitTtl(ms: number): void {
    this.options.ttlMs = Math.min(this.options.ttlMs, ms)
  }

  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes }
  }

  /** The person if in memory now (its properties null: no such person), else undefined. Counted as a lookup. */
  cachedPerson(teamId: number, distinctId: string): CachedPerson | undefined {
    return this.peek(personKey(teamId, distinctId)) as CachedPerson | undefined
  }

  /** A group's properties if in memory now (null: no such group), else undefined. */
  cachedGroup(teamId: number, index: number, key: string): Properties | null | undefined {
    return this.peek(groupKey(teamId, index, key)) as Properties | null | undefined
  }

  private peek(key: string): Cached | undefined {
    const hit = this.hit(key, Date.now())
    if (hit === undefined) return undefined
    this.options.onLookup?.('hit')
    return hit.value
  }

  /** The same answer as loadStoredProperties, from memory where it can. */
  async get(request: StoredPropertiesRequest): Promise<StoredProperties> {
    const { teamId } = request
    const wanted: { key: string; person: boolean; group?: [number, string] }[] = []
    if (request.distinctId !== undefined) wanted.push({ key: personKey(teamId, request.distinctId), person: true })
    for (const g of request.groups ?? []) wanted.push({ key: groupKey(teamId, g[0], g[1]), person: false, group: g })

    const values = new Map<string, Cached | Promise<Cached>>()
    let missPerson = false
    const missGroups: [number, string][] = []
    const now = Date.now()
    for (const w of wanted) {
      const hit = this.hit(w.key, now)
      if (hit !== undefined) {
        this.options.onLookup?.('hit')
        values.set(w.key, hit.value)
        continue
      }
      this.options.onLookup?.('miss')
      const inFlight = this.pending.get(w.key)
      if (inFlight) values.set(w.key, inFlight.promise)
      else if (w.person) missPerson = true
      else missGroups.push(w.group!)
    }
    if (missPerson || missGroups.length > 0) {
      for (const [key, promise] of this.fill(teamId, missPerson ? request.distinctId : undefined, missGroups)) values.set(key, promise)
    }

    const result: StoredProperties = { person: request.distinctId === undefined ? undefined : null, groups: new Map() }
    for (const w of wanted) {
      const value = await values.get(w.key)!
      if (w.person) {
        const person = value as CachedPerson
        result.person = person.properties
        result.staticCohorts = person.staticCohorts
      } else result.groups.set(w.group![0], value as Properties | null)
    }
    return result
  }

  /** Forget what a change made stale (and any read of it in flight). */
  invalidate(change: PersonChange): void {
    if (change.all) {
      const prefix = `${change.teamId}\u0000`
      for (const key of [...this.entries.keys()]) if (key.startsWith(prefix)) this.drop(key)
      for (const [key, p] of this.pending) if (key.startsWith(prefix)) p.stale = true
      return
    }
    for (const id of change.distinctIds) this.forget(personKey(change.teamId, id))
    for (const [index, key] of change.groups) this.forget(groupKey(change.teamId, index, key))
  }

  /** Forget everything (a lost change feed: what was missed is unknown). */
  clear(): void {
    this.entries.clear()
    this.bytes = 0
    for (const p of this.pending.values()) p.stale = true
  }

  private hit(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (now - entry.at > this.options.ttlMs) {
      this.drop(key)
      return undefined
    }
    // most recently used last: eviction takes from the front. An entry moved back within the last half of the map's
    // size is still in its back half: moving it again (a delete and an insert on every hit) would change no eviction
    // soon, so it stays
    if (this.touches - entry.touched > this.entries.size >> 1) {
      this.entries.delete(key)
      this.entries.set(key, entry)
      entry.touched = ++this.touches
    }
    return entry
  }

  /** One read for every missing key; each key's promise is shared with the requests that miss it meanwhile. */
  private fill(teamId: number, distinctId: string | undefined, groups: [number, string][]): Map<string, Promise<Cached>> {
    const read = this.load({ teamId, distinctId, groups })
    const out = new Map<string, Promise<Cached>>()
    const track = (key: string, pick: (loaded: Awaited<typeof read>) => { value: Cached; bytes: number }) => {
      const state = { stale: false }
      const promise = read.then(
        (loaded) => {
          const sized = pick(loaded)
          if (this.pending.get(key) === pending) this.pending.delete(key)
          if (!state.stale) this.store(key, sized)
          return sized.value
        },
        (error) => {
          if (this.pending.get(key) === pending) this.pending.delete(key)
          throw error
        },
      )
      const pending: Pending = Object.assign(state, { promise })
      this.pending.set(key, pending)
      out.set(key, pending.promise)
    }
    if (distinctId !== undefined) {
      track(personKey(teamId, distinctId), (l) => ({
        value: { properties: l.person?.value ?? null, staticCohorts: l.person?.staticCohorts ?? NO_COHORTS },
        bytes: l.person?.bytes ?? 0,
      }))
    }
    for (const [index, key] of groups) track(groupKey(teamId, index, key), (l) => l.groups.get(index) ?? { value: null, bytes: 0 })
    return out
  }

  private store(key: string, sized: { value: Cached; bytes: number }): void {
    const bytes = sized.bytes + key.length * 2 + ENTRY_OVERHEAD_BYTES
    if (bytes > this.options.maxBytes / 16) return // one huge person must not flush everyone else
    this.drop(key)
    this.entries.set(key, { value: sized.value, bytes, at: Date.now(), touched: ++this.touches })
    this.bytes += bytes
    while (this.bytes > this.options.maxBytes) {
      const oldest = this.entries.keys().next().value
      if (oldest === undefined) break
      this.drop(oldest)
    }
  }

  private forget(key: string): void {
    this.drop(key)
    const p = this.pending.get(key)
    if (p) p.stale = true
  }

  private drop(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.bytes -= entry.bytes
  }
}
