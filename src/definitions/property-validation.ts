// What the property definitions API accepts: the list's query parameters, PATCH/PUT bodies and seen_together's
// parameters, checked one by one so that each error names its parameter or member.
import { errors } from '../http/errors'
import type { PropertyChanges, PropertyKind, PropertyListQuery } from './property-repository'
import { PROPERTY_TYPES, type PropertyType } from './property-types'
import { booleanMember, booleanParam, descriptionMember, objectBody, tagsMember, type CurationChange } from './rules'

const KINDS = new Set<PropertyKind>(['event', 'person', 'group', 'session'])
/** Most names a list parameter (properties, event_names, excluded_properties, seen_together) may carry. */
export const MAX_NAMES_PER_PARAMETER = 1000
const MAX_NAME_LENGTH = 400

/** The list's filters, as the repository takes them (paging and search terms are read by the shared rules). */
export type PropertyListParams = Omit<PropertyListQuery, 'teamId' | 'limit' | 'offset' | 'terms'>

export interface PropertyListQueryParams {
  type?: string
  group_type_index?: string
  properties?: string
  is_numerical?: string
  is_feature_flag?: string
  event_names?: string
  filter_by_event_names?: string
  excluded_properties?: string
  exclude_hidden?: string
}

function boundedNames(names: string[], attr: string): string[] {
  if (names.length > MAX_NAMES_PER_PARAMETER) throw errors.validation('max_length', `At most ${MAX_NAMES_PER_PARAMETER} names.`, attr)
  if (names.some((n) => n.length > MAX_NAME_LENGTH)) throw errors.validation('max_length', `Names are at most ${MAX_NAME_LENGTH} characters.`, attr)
  return names
}

/** A JSON-encoded array of names (`["a","b"]`); numbers and booleans count as their text. */
export function jsonNames(raw: string | undefined, attr: string): string[] | null {
  if (raw === undefined || raw === '') return null
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    throw errors.validation('invalid_input', 'Expected a JSON array of names.', attr)
  }
  if (!Array.isArray(value) || value.some((v) => v === null || typeof v === 'object')) {
    throw errors.validation('invalid_input', 'Expected a JSON array of names.', attr)
  }
  return boundedNames(value.map((v) => String(v)), attr)
}

function groupTypeIndex(raw: string | undefined, kind: PropertyKind): number | null {
  if (raw === undefined || raw === '') {
    if (kind === 'group') throw errors.validation('invalid_input', '`group_type_index` must be set for `group` type', 'group_type_index')
    return null
  }
  if (kind !== 'group') throw errors.validation('invalid_input', '`group_type_index` can only set for `group` type', 'group_type_index')
  if (!/^\s*-?\d{1,9}\s*$/.test(raw)) throw errors.validation('invalid_input', 'A valid integer is required.', 'group_type_index')
  const index = Number(raw)
  if (index < 0 || index > 4) throw errors.validation('invalid_input', 'Invalid value for `group_type_index`', 'group_type_index')
  return index
}

/** The list's filters (paging and search are read as for event definitions). */
export function parsePropertyListParams(q: PropertyListQueryParams): PropertyListParams {
  const kind = (q.type ?? 'event') as PropertyKind
  if (!KINDS.has(kind)) throw errors.validation('invalid_choice', `"${String(q.type).slice(0, 100)}" is not a valid choice.`, 'type')
  const eventNames = jsonNames(q.event_names, 'event_names')
  if (eventNames !== null && kind !== 'event') throw errors.validation('invalid_input', '`event_names` can only be set for `event` type', 'event_names')
  const names = q.properties === undefined || q.properties === '' ? null : boundedNames(q.properties.split(',').map((n) => n.trim()).filter(Boolean), 'properties')
  return {
    kind,
    groupTypeIndex: groupTypeIndex(q.group_type_index, kind),
    names,
    // PostHog filters on is_numerical=true only; false lists everything
    numericalOnly: booleanParam(q.is_numerical, 'is_numerical') === true,
    featureFlags: booleanParam(q.is_feature_flag, 'is_feature_flag') ?? null,
    eventNames: eventNames && eventNames.length > 0 ? eventNames : null,
    onlySeenOnEvents: booleanParam(q.filter_by_event_names, 'filter_by_event_names') === true,
    excluded: jsonNames(q.excluded_properties, 'excluded_properties') ?? [],
    excludeHidden: booleanParam(q.exclude_hidden, 'exclude_hidden') === true,
  }
}

const PROPERTY_READ_ONLY = new Set([
  'id', 'name', 'is_numerical', 'is_seen_on_filtered_events', 'verified_at', 'verified_by', 'updated_at', 'updated_by',
])

export interface PropertyWrite {
  changes: PropertyChanges
  curation: CurationChange
}

function propertyType(value: unknown): PropertyType | null {
  if (value === null) return null
  if (typeof value === 'string' && (PROPERTY_TYPES as readonly string[]).includes(value)) return value as PropertyType
  const shown = typeof value === 'string' ? value.slice(0, 100) : JSON.stringify(value)?.slice(0, 100)
  throw errors.validation('invalid_choice', `"${shown}" is not a valid choice.`, 'property_type')
}

/** A PATCH (or PUT) body: description, tags, property_type, verified, hidden; read-only members are ignored. */
export function parsePropertyChanges(body: unknown): PropertyWrite {
  const changes: PropertyChanges = {}
  const curation: CurationChange = {}
  for (const [key, value] of Object.entries(objectBody(body))) {
    if (PROPERTY_READ_ONLY.has(key)) continue
    if (key === 'description') changes.description = descriptionMember(value)
    else if (key === 'tags') changes.tags = tagsMember(value)
    else if (key === 'property_type') changes.property_type = propertyType(value)
    else if (key === 'verified' || key === 'hidden') curation[key] = booleanMember(value, key)
    else throw errors.validation('invalid_input', `Unknown field "${key}": only description, tags, property_type, verified and hidden can be changed.`, key)
  }
  return { changes, curation }
}

/** seen_together: `event_names` (repeated) and `property_name`, both required. */
export function parseSeenTogether(eventNames: string[], propertyName: string | null): { events: string[]; property: string } {
  const events = [...new Set(eventNames)]
  if (events.length === 0) throw errors.validation('required', 'This field is required.', 'event_names')
  if (propertyName === null || propertyName === '') throw errors.validation('required', 'This field is required.', 'property_name')
  return { events: boundedNames(events, 'event_names'), property: boundedNames([propertyName], 'property_name')[0]! }
}
