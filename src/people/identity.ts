// PostHog's person rules, applied in memory to a batch of events in order: who is who after $identify,
// $create_alias and $merge_dangerously, and what $set / $set_once / $unset do to a person's properties.
// Pure: the learner loads the persons a batch touches, applies the batch here, and writes the outcome.
import { createHash } from 'node:crypto'

export interface Person {
  /** database id; undefined for a person created in this batch */
  id?: number
  uuid: string
  properties: Record<string, unknown>
  isIdentified: boolean
  createdAt: number
  distinctIds: Set<string>
  changed: boolean
  /** merged into another person: to be deleted */
  mergedInto?: Person
  /** characters of the properties' JSON, or more (an upper bound kept as updates apply); unknown until needed */
  propertiesSize?: number
}

/**
 * The largest person (and group) properties kept, in characters of their JSON. A $set that would take a person
 * past it is dropped and counted, the person kept as it was: eight multi-megabyte $sets built an 84 MB person
 * whose every /decide missed the cache and took a second. Real persons hold a few kilobytes.
 */
export const MAX_PERSON_PROPERTIES_SIZE = 512 * 1024

const jsonSize = (v: unknown): number => JSON.stringify(v)?.length ?? 0

export interface PersonEvent {
  event: string
  distinctId: string
  properties: Record<string, unknown>
  timestamp: number
}

// Ids clients send when they do not know who the user is; never merged (PostHog's person-merge-service).
const ILLEGAL_ANY_CASE = ['anonymous', 'guest', 'distinctid', 'distinct_id', 'id', 'not_authenticated', 'email', 'undefined', 'true', 'false']
const ILLEGAL_EXACT = ['[object Object]', 'NaN', 'None', 'none', 'null', '0', 'undefined']
const quoted = (ids: string[]) => ids.flatMap((id) => [id, `'${id}'`, `"${id}"`])
const illegalAnyCase = new Set(quoted(ILLEGAL_ANY_CASE))
const illegalExact = new Set(quoted(ILLEGAL_EXACT))

export function isIllegalDistinctId(id: string): boolean {
  return id.trim() === '' || illegalAnyCase.has(id.toLowerCase()) || illegalExact.has(id)
}

const PERSON_NAMESPACE = Buffer.from('932979b465c3442484670b66ec27bc22', 'hex')

/** PostHog's person uuid: UUIDv5 of "{team_id}:{distinct_id}" in its namespace. */
export function personUuid(teamId: number, distinctId: string): string {
  const hash = createHash('sha1').update(PERSON_NAMESPACE).update(`${teamId}:${distinctId}`, 'utf8').digest()
  hash[6] = (hash[6] & 0x0f) | 0x50
  hash[8] = (hash[8] & 0x3f) | 0x80
  const h = hash.subarray(0, 16).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

// Events that never touch persons (PostHog strips their $set; exceptions and heatmaps skip persons).
const NO_PERSON_UPDATES = new Set(['$groupidentify', '$exception', '$$heatmap'])

/** The persons of one project as a batch of events leaves them. */
export class IdentityModel {
  private readonly byDistinctId = new Map<string, Person>()
  /** distinct ids whose person is new or different after this batch */
  private readonly assigned = new Map<string, Person>()

  constructor(
    private readonly teamId: number,
    loaded: Iterable<Person>,
  ) {
    for (const person of loaded) for (const id of person.distinctIds) this.byDistinctId.set(id, person)
  }

  personOf(distinctId: string): Person | undefined {
    return this.byDistinctId.get(distinctId)
  }

  /** Distinct ids to (re)point at their person. */
  assignments(): [string, Person][] {
    return [...this.assigned]
  }

  /** Every person the batch created, changed or merged away (each once). */
  touched(): Person[] {
    const out = new Set<Person>()
    for (const person of this.byDistinctId.values()) if (person.changed) out.add(person)
    for (const person of this.merged) out.add(person)
    return [...out]
  }

  private readonly merged: Person[] = []
  /** property updates refused because the person would pass MAX_PERSON_PROPERTIES_SIZE */
  droppedTooLarge = 0

  private create(distinctId: string, at: number): Person {
    const person: Person = {
      uuid: personUuid(this.teamId, distinctId),
      properties: {},
      isIdentified: false,
      createdAt: at,
      distinctIds: new Set([distinctId]),
      changed: true,
    }
    this.byDistinctId.set(distinctId, person)
    this.assigned.set(distinctId, person)
    return person
  }

  private attach(person: Person, distinctId: string): void {
    person.distinctIds.add(distinctId)
    person.changed = true
    this.byDistinctId.set(distinctId, person)
    this.assigned.set(distinctId, person)
  }

  /** `other` joins `into` (PostHog's handleIdentifyOrAlias): returns the person the event is about. */
  private merge(otherId: string, intoId: string, at: number, dangerously: boolean): Person {
    const into = this.byDistinctId.get(intoId)
    const other = this.byDistinctId.get(otherId)
    if (otherId === intoId || isIllegalDistinctId(otherId) || isIllegalDistinctId(intoId)) {
      return into ?? this.create(intoId, at)
    }
    let target: Person
    if (!into && !other) {
      target = this.create(intoId, at)
      this.attach(target, otherId)
    } else if (into && !other) {
      target = into
      this.attach(into, otherId)
    } else if (!into && other) {
      target = other
      this.attach(other, intoId)
    } else if (into === other) {
      target = into!
    } else if (other!.isIdentified && !dangerously) {
      // An identified person is not merged into another (cannot_merge_already_identified).
      return into!
    } else {
      target = into!
      const absorbed = other!
      target.properties = { ...absorbed.properties, ...target.properties }
      target.propertiesSize = undefined
      target.createdAt = Math.min(target.createdAt, absorbed.createdAt)
      for (const id of absorbed.distinctIds) this.attach(target, id)
      absorbed.distinctIds.clear()
      absorbed.mergedInto = target
      absorbed.changed = false
      this.merged.push(absorbed)
    }
    if (!target.isIdentified) {
      target.isIdentified = true
      target.changed = true
    }
    return target
  }

  /** Apply one event. Returns false when the event is not about persons at all. */
  apply(e: PersonEvent): boolean {
    if (NO_PERSON_UPDATES.has(e.event)) return false
    if (e.properties.$process_person_profile === false) return false
    const p = e.properties
    let person: Person
    if (e.event === '$identify' && typeof p.$anon_distinct_id === 'string') {
      person = this.merge(p.$anon_distinct_id, e.distinctId, e.timestamp, false)
    } else if ((e.event === '$create_alias' || e.event === '$merge_dangerously') && (typeof p.alias === 'string' || typeof p.alias === 'number')) {
      person = this.merge(String(p.alias), e.distinctId, e.timestamp, e.event === '$merge_dangerously')
    } else {
      person = this.byDistinctId.get(e.distinctId) ?? this.create(e.distinctId, e.timestamp)
    }
    if (e.event === '$identify' && !person.isIdentified) {
      person.isIdentified = true
      person.changed = true
    }
    if (this.applyBounded(person, p)) person.changed = true
    return true
  }

  /**
   * applyPropertyUpdates within MAX_PERSON_PROPERTIES_SIZE. The size is tracked as an upper bound (what the
   * person was plus what the update could add), measured exactly only when that bound passes the limit.
   */
  private applyBounded(person: Person, p: Record<string, unknown>): boolean {
    const adds = (isObject(p.$set) ? jsonSize(p.$set) : 0) + (isObject(p.$set_once) ? jsonSize(p.$set_once) : 0)
    if (adds === 0) return applyPropertyUpdates(person.properties, p)
    const size = (person.propertiesSize ??= jsonSize(person.properties))
    if (size + adds <= MAX_PERSON_PROPERTIES_SIZE) {
      person.propertiesSize = size + adds
      return applyPropertyUpdates(person.properties, p)
    }
    const trial = { ...person.properties }
    const changed = applyPropertyUpdates(trial, p)
    const exact = jsonSize(trial)
    if (exact > MAX_PERSON_PROPERTIES_SIZE && exact > size) {
      this.droppedTooLarge++
      person.propertiesSize = jsonSize(person.properties)
      return false
    }
    person.properties = trial
    person.propertiesSize = exact
    return changed
  }
}

/**
 * A property set as an own key whatever its name: `target[k] = v` with k = "__proto__" would replace the
 * object's prototype instead (the key lost, and the injected prototype's keys then look present).
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true })
}

/** $set overwrites, $set_once fills only absent keys, $unset removes; true when anything changed. */
export function applyPropertyUpdates(target: Record<string, unknown>, properties: Record<string, unknown>): boolean {
  let changed = false
  // own keys only: "constructor" or "toString" are not "present" because every object inherits them
  if (isObject(properties.$set_once)) {
    for (const [k, v] of Object.entries(properties.$set_once)) {
      if (!Object.hasOwn(target, k)) {
        setOwn(target, k, v)
        changed = true
      }
    }
  }
  if (isObject(properties.$set)) {
    for (const [k, v] of Object.entries(properties.$set)) {
      if (!Object.hasOwn(target, k) || JSON.stringify(target[k]) !== JSON.stringify(v)) {
        setOwn(target, k, v)
        changed = true
      }
    }
  }
  const unset = properties.$unset
  const keys = Array.isArray(unset) ? unset : isObject(unset) ? Object.keys(unset) : []
  for (const k of keys) {
    if (typeof k === 'string' && Object.hasOwn(target, k)) {
      delete target[k]
      changed = true
    }
  }
  return changed
}
