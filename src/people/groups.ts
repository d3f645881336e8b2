// Groups learned from events: group types get the lowest free index 0..4 in order of first sight (at most
// five per project), and $groupidentify's $group_set is merged into the group's properties.
import { MAX_PERSON_PROPERTIES_SIZE, setOwn, type PersonEvent } from './identity'

export const MAX_GROUP_TYPES = 5

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

const NONE: readonly string[] = Object.freeze([])

/** Group types an event names: $groupidentify's $group_type, and the keys of properties.$groups. */
export function groupTypesOf(e: PersonEvent): readonly string[] {
  if (e.event !== '$groupidentify' && !isObject(e.properties.$groups)) return NONE // most events: nothing allocated
  const types: string[] = []
  if (e.event === '$groupidentify' && typeof e.properties.$group_type === 'string') types.push(e.properties.$group_type)
  if (isObject(e.properties.$groups)) for (const t of Object.keys(e.properties.$groups)) types.push(t)
  return types.filter((t) => t.length > 0 && t.length <= 400)
}

/** New types get the lowest unused index; a sixth type (or more), or one an admin blocked, gets none. */
export function allocateGroupTypes(existing: ReadonlyMap<string, number>, seenInOrder: string[], blocked: ReadonlySet<string> = new Set()): [string, number][] {
  const used = new Set(existing.values())
  const added: [string, number][] = []
  const known = new Set(existing.keys())
  for (const type of seenInOrder) {
    if (known.has(type) || blocked.has(type)) continue
    let index = 0
    while (used.has(index)) index++
    if (index >= MAX_GROUP_TYPES) continue
    used.add(index)
    known.add(type)
    added.push([type, index])
  }
  return added
}

export interface GroupUpdate {
  type: string
  key: string
  properties: Record<string, unknown>
}

/**
 * The groups $groupidentify events set, merged in event order (later $group_set values win). A $group_set
 * larger than the property limit (the same as a person's) is dropped and counted in `dropped`; the store keeps
 * a group's merged properties within it too (upsertGroups).
 */
export function groupUpdates(events: PersonEvent[], dropped = { tooLarge: 0 }): GroupUpdate[] {
  const byGroup = new Map<string, GroupUpdate>()
  for (const e of events) {
    if (e.event !== '$groupidentify') continue
    const type = e.properties.$group_type
    const rawKey = e.properties.$group_key
    if (typeof type !== 'string' || (typeof rawKey !== 'string' && typeof rawKey !== 'number')) continue
    const key = String(rawKey)
    if (key.length === 0 || key.length > 400) continue
    const id = `${type}\u0000${key}`
    const update = byGroup.get(id) ?? { type, key, properties: {} }
    if (isObject(e.properties.$group_set) && JSON.stringify(e.properties.$group_set).length > MAX_PERSON_PROPERTIES_SIZE) {
      dropped.tooLarge++
      byGroup.set(id, update)
      continue
    }
    if (isObject(e.properties.$group_set)) for (const [k, v] of Object.entries(e.properties.$group_set)) setOwn(update.properties, k, v)
    byGroup.set(id, update)
  }
  return [...byGroup.values()]
}
