// What the cohorts REST API accepts: PostHog's CohortSerializer fields and CohortFilters shape, with its messages,
// plus bounds (every cohort a flag uses is held compiled in memory and evaluated on /decide).
import { errors } from '../http/errors'
import { assertStorable, charField } from '../http/fields'
import { MAX_COHORT_DEPTH } from '../flags/engine'

export const COHORT_LIMITS = {
  nameCharacters: 400,
  descriptionCharacters: 1000,
  /** the filters object, as JSON text */
  filtersBytes: 128 * 1024,
  /** filters (leaves) in one cohort */
  filters: 1000,
  /** values of one filter's list */
  values: 1000,
  /** non-deleted cohorts in one project */
  perProject: 2000,
  /** person ids in one add_persons_to_static_cohort (PostHog's batch size) */
  addPersons: 1000,
  /** person ids in _create_static_person_ids */
  createPersons: 10_000,
} as const

export interface CohortInput {
  name?: string | null
  description?: string
  filters?: Record<string, unknown> | null
  groups?: unknown[]
  is_static?: boolean
  deleted?: boolean
  /** person uuids to add on create (static cohorts) */
  personIds?: string[]
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

const TRUE_VALUES = new Set<unknown>(['t', 'T', 'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON', '1', 1, true])
const FALSE_VALUES = new Set<unknown>(['f', 'F', 'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF', '0', 0, false])

function booleanField(value: unknown, attr: string): boolean {
  if (value === null) throw errors.validation('null', 'This field may not be null.', attr)
  if (TRUE_VALUES.has(value)) return true
  if (FALSE_VALUES.has(value)) return false
  throw errors.validation('invalid_input', 'Must be a valid boolean.', attr)
}

function invalidFilters(detail: string, code = 'invalid_input'): never {
  throw errors.validation(code, detail, 'filters')
}

const NO_VALUE_OPERATORS = new Set(['is_set', 'is_not_set'])
const FILTER_TYPES = new Set(['person', 'cohort', 'behavioral', 'person_metadata'])

/** One filter of a cohort (CohortFilters' person / cohort / behavioral filters). */
function checkFilter(f: Record<string, unknown>): void {
  const type = f.type
  if (typeof type !== 'string' || !FILTER_TYPES.has(type)) invalidFilters(`Invalid filter type: ${JSON.stringify(type ?? null)}. Filters are person, cohort or behavioral.`)
  const kind = type === 'person_metadata' ? 'person' : type
  const missing = (field: string): never => invalidFilters(`Missing required keys for ${kind} filter: ${field}`)
  if (!('key' in f) || f.key === null) missing('key')
  if (f.negation !== undefined && f.negation !== null && typeof f.negation !== 'boolean') invalidFilters('negation must be a boolean')
  if (Array.isArray(f.value) && f.value.length > COHORT_LIMITS.values) {
    invalidFilters(`A cohort filter may list at most ${COHORT_LIMITS.values} values.`, 'limit_exceeded')
  }
  if (kind === 'person') {
    if (typeof f.key !== 'string') invalidFilters('A person filter key must be a string')
    if (f.operator === undefined || f.operator === null) missing('operator')
    if (typeof f.operator !== 'string') invalidFilters('A person filter operator must be a string')
    if (!NO_VALUE_OPERATORS.has(f.operator) && !('value' in f)) missing('value')
  } else if (kind === 'cohort') {
    if (!('value' in f) || f.value === null) missing('value')
    const ok = (typeof f.value === 'number' && Number.isInteger(f.value)) || (typeof f.value === 'string' && /^\s*\d{1,9}\s*$/.test(f.value))
    if (!ok) invalidFilters('A cohort filter value must be a cohort id (an integer)')
  } else if (!('value' in f)) missing('value')
}

/** A group `{type: AND|OR, values: [...]}`; returns how many filters it holds. */
function checkGroup(g: unknown, depth: number): number {
  if (depth > MAX_COHORT_DEPTH) invalidFilters(`Cohort filters may nest at most ${MAX_COHORT_DEPTH} groups deep.`, 'limit_exceeded')
  if (!isObject(g) || (g.type !== 'AND' && g.type !== 'OR') || !Array.isArray(g.values)) {
    invalidFilters("Must contain a 'properties' key with type and values")
  }
  let count = 0
  for (const v of g.values) {
    if (isObject(v) && 'values' in v && !('key' in v)) count += checkGroup(v, depth + 1)
    else if (isObject(v)) {
      checkFilter(v)
      count++
    } else invalidFilters('Each cohort filter must be an object')
  }
  return count
}

/** CohortFilters: `{properties: {type, values}}`. Static cohorts skip it (their criteria are their members). */
export function validateCohortFilters(raw: unknown): Record<string, unknown> {
  if (!isObject(raw) || !('properties' in raw)) invalidFilters("Must contain a 'properties' key with type and values")
  const text = JSON.stringify(raw)
  if (text.length > COHORT_LIMITS.filtersBytes) invalidFilters(`Cohort filters may be at most ${COHORT_LIMITS.filtersBytes} bytes of JSON.`, 'limit_exceeded')
  const properties = raw.properties
  // an empty group is PostHog's "no criteria" (it matches everyone)
  if (!(isObject(properties) && Object.keys(properties).length === 0)) {
    const count = checkGroup(properties, 0)
    if (count > COHORT_LIMITS.filters) invalidFilters(`A cohort may have at most ${COHORT_LIMITS.filters} filters.`, 'limit_exceeded')
  }
  assertStorable(raw, 'filters')
  return raw
}

/**
 * PostHog's legacy `groups` (a list of `{properties: [...] | {key: value}, action_id?, event_id?, days?}`), read as
 * filters: each group with properties is an AND of person filters, a group on an action or event is a behavioural
 * filter, and the groups are ORed. Used when a cohort is written with `groups` and no `filters`.
 */
export function filtersFromGroups(groups: unknown[]): Record<string, unknown> {
  const values: unknown[] = []
  for (const g of groups) {
    if (!isObject(g)) continue
    if (g.action_id !== undefined || g.event_id !== undefined) {
      const key = g.action_id ?? g.event_id
      values.push({ type: 'AND', values: [{ key, type: 'behavioral', value: 'performed_event', event_type: g.action_id !== undefined ? 'actions' : 'events' }] })
      continue
    }
    const props = g.properties
    let filters: Record<string, unknown>[] = []
    if (Array.isArray(props)) {
      filters = props.filter(isObject).map((p) => ({ ...p, type: p.type === undefined || p.type === 'event' ? 'person' : p.type, operator: p.operator ?? 'exact' }))
    } else if (isObject(props)) {
      filters = Object.entries(props).map(([key, value]) => ({ key, value, type: 'person', operator: 'exact' }))
    }
    if (filters.length > 0) values.push({ type: 'AND', values: filters })
  }
  return { properties: { type: 'OR', values } }
}

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i

/** Person uuids as PostHog's UUIDField reads them; anything else matches no person. */
export function personUuids(values: unknown[]): string[] {
  const out: string[] = []
  for (const v of values) {
    if (typeof v !== 'string') continue
    const s = v.trim()
    if (UUID.test(s)) out.push(s.toLowerCase())
  }
  return out
}

/** A create (POST) or partial update (PATCH) body; `multipart` bodies carry every field as text. */
export function validateCohortBody(body: unknown, method: 'POST' | 'PATCH', current: { is_static: boolean } | null): CohortInput {
  if (!isObject(body)) {
    const got = Array.isArray(body) ? 'list' : body === null ? 'NoneType' : typeof body
    throw errors.validation('invalid_input', `Invalid data. Expected a dictionary, but got ${got}.`, null)
  }
  const out: CohortInput = {}
  const has = (k: string) => Object.hasOwn(body, k)
  if (has('name')) out.name = body.name === null ? null : charField(body.name, 'name', { allowBlank: true, maxLength: COHORT_LIMITS.nameCharacters })
  if (has('description')) out.description = charField(body.description, 'description', { allowBlank: true, maxLength: COHORT_LIMITS.descriptionCharacters })
  if (has('is_static')) out.is_static = booleanField(body.is_static, 'is_static')
  if (has('deleted')) out.deleted = booleanField(body.deleted, 'deleted')
  if (has('groups')) {
    let groups = body.groups
    if (typeof groups === 'string') groups = parseJsonField(groups, 'groups')
    if (!Array.isArray(groups)) throw errors.validation('not_a_list', `Expected a list of items but got type "${typeof groups}".`, 'groups')
    assertStorable(groups, 'groups')
    if (JSON.stringify(groups).length > COHORT_LIMITS.filtersBytes) throw errors.validation('limit_exceeded', 'groups is too large.', 'groups')
    out.groups = groups
  }
  const isStatic = out.is_static ?? current?.is_static ?? false
  if (has('filters') && body.filters !== null) {
    let filters: unknown = body.filters
    if (typeof filters === 'string') filters = parseJsonField(filters, 'filters')
    if (isStatic) {
      if (!isObject(filters)) throw errors.validation('invalid_input', "Must contain a 'properties' key with type and values", 'filters')
      assertStorable(filters, 'filters')
      if (JSON.stringify(filters).length > COHORT_LIMITS.filtersBytes) invalidFilters('Cohort filters are too large.', 'limit_exceeded')
      out.filters = filters
    } else out.filters = validateCohortFilters(filters)
  } else if (has('filters')) out.filters = null
  if ((out.filters === undefined || out.filters === null) && out.groups && out.groups.length > 0 && !isStatic) {
    out.filters = validateCohortFilters(filtersFromGroups(out.groups))
  }
  if (method === 'POST' && !isStatic && out.filters === undefined) out.filters = { properties: {} }
  if (has('query') && body.query !== null && body.query !== undefined) {
    throw errors.validation('invalid_input', 'Cohorts defined by a query are not supported by this service; use filters, or a static cohort.', 'query')
  }
  if (has('_create_static_person_ids')) {
    const ids = body._create_static_person_ids
    if (!Array.isArray(ids)) throw errors.validation('not_a_list', `Expected a list of items but got type "${typeof ids}".`, '_create_static_person_ids')
    if (ids.length > COHORT_LIMITS.createPersons) {
      throw errors.validation('limit_exceeded', `At most ${COHORT_LIMITS.createPersons} person ids at once.`, '_create_static_person_ids')
    }
    out.personIds = personUuids(ids)
  }
  return out
}

/** A JSON-valued field sent as text (multipart form fields). */
function parseJsonField(text: string, attr: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    throw errors.validation('invalid', 'Value must be valid JSON.', attr)
  }
}
