// What the flag REST API accepts: PostHog's FeatureFlagSerializer field checks and validate_key /
// validate_filters, in the order DRF runs them (fields in declaration order: name, key, filters, deleted,
// active, ensure_experience_continuity), so the first error reported is the one PostHog would report.
// Cohort and flag (dependency) filters are checked against the stored cohorts and flags (reference-checks.ts).
import { tagsMember } from '../definitions/rules'
import { errors } from '../http/errors'
import { assertStorable, charField } from '../http/fields'
import { parseFilterDate } from './engine/dates'
import { compilePythonRegex, sanitizeRegexPattern } from './engine/python/pyregex'
import { pyStr } from './engine/python/pyvalue'
import { checkFilterLimits, FLAG_LIMITS } from './limits'
import { checkCohortFilter, checkDependencies, type FilterReferences, NO_REFERENCES, referencesOf } from './reference-checks'

export type WriteMethod = 'POST' | 'PATCH' | 'PUT'

export interface FlagInput {
  key?: string
  name?: string
  filters?: Record<string, unknown>
  active?: boolean
  deleted?: boolean
  ensure_experience_continuity?: boolean
  /** PostHog's tags (a flag export carries them): normalised as definitions' tags are */
  tags?: string[]
}

export const KEY_MAX_LENGTH = 400
export const MAX_PROPERTY_VALUES = 1000
const KEY_PATTERN = /^[a-zA-Z0-9_-]+$/

const SUPPORTED_OPERATORS = new Set([
  'exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte',
  'is_set', 'is_not_set', 'is_date_exact', 'is_date_after', 'is_date_before', 'in', 'not_in',
])
// PostHog operators that exist but that this service's engine does not evaluate.
const OTHER_POSTHOG_OPERATORS = new Set([
  'between', 'not_between', 'min', 'max', 'icontains_multi', 'not_icontains_multi', 'flag_evaluates_to',
  'semver_eq', 'semver_neq', 'semver_gt', 'semver_gte', 'semver_lt', 'semver_lte', 'semver_tilde',
  'semver_caret', 'semver_wildcard',
])
const STRING_VALUE_OPERATORS = new Set(['regex', 'icontains', 'not_regex', 'not_icontains', 'gte', 'lte', 'gt', 'lt'])
const DATE_OPERATORS = new Set(['is_date_before', 'is_date_after', 'is_date_exact'])

const TRUE_VALUES = new Set<unknown>(['t', 'T', 'y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON', '1', 1, true])
const FALSE_VALUES = new Set<unknown>(['f', 'F', 'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF', '0', 0, false])

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function fail(code: string, detail: string, attr: string | null): never {
  throw errors.validation(code, detail, attr)
}

function invalidFilters(detail: string, code = 'invalid_input'): never {
  throw errors.validation(code, detail, 'filters')
}

/** DRF BooleanField. */
function booleanField(value: unknown, attr: string): boolean {
  if (value === null) fail('null', 'This field may not be null.', attr)
  if (TRUE_VALUES.has(value)) return true
  if (FALSE_VALUES.has(value)) return false
  return fail('invalid_input', 'Must be a valid boolean.', attr)
}

function isPercentage(v: unknown): boolean {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 100
}

function validateProperty(raw: unknown, aggregation: number | null): void {
  if (!isObject(raw)) invalidFilters('Filters are not valid (each property must be an object)')
  // a dependency's key is the flag id, which clients may send as a number
  const keyOk = (typeof raw.key === 'string' && raw.key !== '') || (raw.type === 'flag' && typeof raw.key === 'number')
  if (!keyOk) invalidFilters('Filters are not valid (each property needs a key)')
  // Property(type=...) defaults to "event", which no flag may use.
  const type = raw.type ?? 'event'
  if (aggregation === null) {
    if (type !== 'person' && type !== 'cohort' && type !== 'flag') invalidFilters('Filters are not valid (can only use person, cohort, and flag properties)')
  } else if (type !== 'group' || raw.group_type_index !== aggregation) {
    invalidFilters('Filters are not valid (can only use group properties)')
  }
}

function checkPropertyValue(prop: Record<string, unknown>, refs: FilterReferences): void {
  // a dependency: its operator and reference were checked with the dependencies
  if (prop.type === 'flag') return
  const operator = prop.operator ?? 'exact'
  const value = prop.value
  if (typeof operator !== 'string' || (!SUPPORTED_OPERATORS.has(operator) && !OTHER_POSTHOG_OPERATORS.has(operator))) {
    invalidFilters(`Invalid operator: ${pyStr(operator)}`, 'invalid_operator')
  }
  if (!SUPPORTED_OPERATORS.has(operator)) invalidFilters(`Unsupported operator for feature flags: ${operator}`, 'unsupported_operator')
  if (Array.isArray(value) && value.length > MAX_PROPERTY_VALUES) {
    invalidFilters(`Property group expressions of type ${prop.key} cannot contain more than ${MAX_PROPERTY_VALUES} values.`)
  }
  if (prop.type === 'cohort') checkCohortFilter(prop, refs)
  if (DATE_OPERATORS.has(operator) && (value === null || value === undefined || !parseFilterDate(pyStr(value), new Date()))) {
    invalidFilters(`Invalid date value: ${pyStr(value ?? null)}`, 'invalid_date')
  }
  if (STRING_VALUE_OPERATORS.has(operator) && typeof value !== 'string') {
    invalidFilters(`Invalid value for operator ${operator}: ${pyStr(value ?? null)}`, 'invalid_value')
  }
  if ((operator === 'regex' || operator === 'not_regex') && typeof value === 'string') checkRegexRuns(value)
  if ((operator === 'in' || operator === 'not_in') && prop.type !== 'cohort') {
    invalidFilters(`The '${operator}' operator is only valid for cohort properties, not '${pyStr(prop.type ?? 'event')}' properties.`, 'invalid_operator')
  }
}

/**
 * A pattern the linear-time engine cannot run would silently evaluate false: refuse it now, naming the
 * construct, so the admin learns at once (docs/compatibility.md#regex). A pattern Python itself refuses is
 * still accepted and evaluates false, as PostHog does.
 */
function checkRegexRuns(pattern: string): void {
  const compiled = compilePythonRegex(sanitizeRegexPattern(pattern), { ignoreCase: true, dotAll: true })
  if (!compiled.ok && compiled.reason === 'unsupported') {
    invalidFilters(`Regex pattern ${JSON.stringify(pattern)} cannot be used: ${compiled.message} (patterns run on a linear-time engine).`, 'unsupported_regex')
  }
}

function variantKeys(filters: Record<string, unknown>): Set<string> {
  const multivariate = filters.multivariate ?? null
  if (multivariate === null) return new Set()
  if (!isObject(multivariate)) invalidFilters('Invalid variant definitions: multivariate must be an object with a list of variants.')
  const list = multivariate.variants ?? []
  if (!Array.isArray(list)) invalidFilters('Invalid variant definitions: variants must be a list.')
  const keys = new Set<string>()
  let sum = 0
  for (const v of list) {
    if (!isObject(v) || typeof v.key !== 'string' || v.key === '') invalidFilters('Invalid variant definitions: every variant needs a key.')
    if (v.rollout_percentage !== undefined && !isPercentage(v.rollout_percentage)) {
      invalidFilters('Invalid variant definitions: a variant rollout percentage must be a number between 0 and 100.')
    }
    keys.add(v.key)
    sum += (v.rollout_percentage as number | undefined) ?? 0
  }
  // Compared as PostHog does (the sum of the numbers, exactly 100), tolerating float noise like 33.3+33.3+33.4.
  if (list.length > 0 && Math.abs(sum - 100) > 1e-9) {
    invalidFilters('Invalid variant definitions: Variant rollout percentages must sum to 100.')
  }
  return keys
}

function checkPayloads(filters: Record<string, unknown>, variants: Set<string>): void {
  const payloads = filters.payloads ?? {}
  if (!isObject(payloads)) invalidFilters('Payloads must be passed as a dictionary')
  for (const value of Object.values(payloads)) {
    if (typeof value !== 'string') continue
    try {
      JSON.parse(value)
    } catch {
      invalidFilters('Payload value is not valid JSON')
    }
  }
  const keys = Object.keys(payloads)
  if (filters.multivariate) {
    if (!keys.every((k) => variants.has(k))) invalidFilters('Payload keys must match a variant key for multivariate flags')
  } else if (keys.length > 1 || keys.some((k) => k !== 'true')) {
    invalidFilters("Payload keys must be 'true' for boolean flags")
  }
}

/**
 * validate_filters. Returns 'keep' for a PATCH whose filters have no `groups` (PostHog then keeps the stored
 * filters), else the filters to store, exactly as sent.
 */
export function validateFilters(filters: unknown, method: WriteMethod, refs: FilterReferences = NO_REFERENCES): Record<string, unknown> | 'keep' {
  if (filters === null) fail('null', 'This field may not be null.', 'filters')
  if (!isObject(filters)) {
    fail('not_a_dict', `Expected a dictionary of items but got type "${Array.isArray(filters) ? 'list' : typeof filters}".`, 'filters')
  }
  if (!Object.hasOwn(filters, 'groups')) {
    if (method === 'PATCH') return 'keep'
    invalidFilters('Feature flags must have at least one condition set (group).')
  }
  checkFilterLimits(filters)
  const groups = filters.groups
  if (!Array.isArray(groups) || !groups.every(isObject)) invalidFilters('Filters are not valid (groups must be a list of condition sets)')
  const aggregationRaw = filters.aggregation_group_type_index ?? null
  if (aggregationRaw !== null && !(Number.isInteger(aggregationRaw) && (aggregationRaw as number) >= 0 && (aggregationRaw as number) <= 4)) {
    invalidFilters('Filters are not valid (aggregation_group_type_index must be a group type index from 0 to 4, or null)')
  }
  const aggregation = aggregationRaw as number | null
  const conditions = groups as Record<string, unknown>[]
  const propertiesOf = (c: Record<string, unknown>): unknown[] => {
    const props = c.properties ?? []
    if (!Array.isArray(props)) invalidFilters('Filters are not valid (properties must be a list)')
    return props
  }
  for (const condition of conditions) for (const prop of propertiesOf(condition)) validateProperty(prop, aggregation)
  if (aggregation === null) {
    for (const condition of conditions) {
      for (const prop of propertiesOf(condition) as Record<string, unknown>[]) {
        if (prop.type === 'flag' && prop.operator !== 'flag_evaluates_to') invalidFilters("Flag properties must use the 'flag_evaluates_to' operator")
      }
    }
    checkDependencies(filters, refs)
  }

  const variants = variantKeys(filters)
  for (const condition of conditions) {
    const variant = condition.variant
    if (variant && !(typeof variant === 'string' && variants.has(variant))) {
      invalidFilters('Filters are not valid (variant override does not exist)')
    }
    const rollout = condition.rollout_percentage ?? null
    if (rollout !== null && !isPercentage(rollout)) {
      invalidFilters('Filters are not valid (rollout_percentage must be a number between 0 and 100, or null)')
    }
    for (const prop of propertiesOf(condition)) checkPropertyValue(prop as Record<string, unknown>, refs)
  }
  checkPayloads(filters, variants)
  for (const name of ['super_groups', 'holdout_groups'] as const) {
    const v = filters[name] ?? null
    if (v !== null && !(Array.isArray(v) && v.every(isObject))) invalidFilters(`Filters are not valid (${name} must be a list of condition sets)`)
  }
  return filters
}

export interface ValidationContext {
  method: WriteMethod
  /** another flag of the project that is not deleted already has this key */
  keyTaken(key: string): Promise<boolean>
  /** the stored key of the flag being updated (null or absent on create) */
  currentKey?: string | null
  /** what cohort and flag filters name: read only when the filters have some */
  references?(want: { cohortIds: number[]; flags: boolean }): Promise<Omit<FilterReferences, 'selfKey'>>
}

/** A create (POST), full update (PUT) or partial update (PATCH) body, checked field by field. */
export async function validateFlagBody(body: unknown, ctx: ValidationContext): Promise<FlagInput> {
  if (!isObject(body)) {
    const got = Array.isArray(body) ? 'list' : body === null ? 'NoneType' : typeof body
    fail('invalid_input', `Invalid data. Expected a dictionary, but got ${got}.`, null)
  }
  const out: FlagInput = {}
  const has = (k: string) => Object.hasOwn(body, k)
  if (has('name')) {
    out.name = charField(body.name, 'name', { allowBlank: true, maxLength: FLAG_LIMITS.nameCharacters })
    assertStorable(out.name, 'name')
  }

  if (has('key')) {
    const key = charField(body.key, 'key', { allowBlank: false, maxLength: KEY_MAX_LENGTH })
    if (await ctx.keyTaken(key)) fail('unique', 'There is already a feature flag with this key.', 'key')
    if (!KEY_PATTERN.test(key)) fail('invalid_key', 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.', 'key')
    out.key = key
  } else if (ctx.method !== 'PATCH') {
    fail('required', 'This field is required.', 'key')
  }

  if (has('filters')) {
    const want = referencesOf(body.filters)
    const found = ctx.references && (want.cohortIds.length > 0 || want.flags) ? await ctx.references(want) : NO_REFERENCES
    const selfKey = ctx.currentKey ?? (typeof body.key === 'string' ? body.key : null)
    const filters = validateFilters(body.filters, ctx.method, { ...found, selfKey })
    if (filters !== 'keep') {
      assertStorable(filters, 'filters')
      out.filters = filters
    }
  }
  if (has('deleted')) out.deleted = booleanField(body.deleted, 'deleted')
  if (has('active')) out.active = booleanField(body.active, 'active')
  if (has('ensure_experience_continuity')) {
    out.ensure_experience_continuity = booleanField(body.ensure_experience_continuity, 'ensure_experience_continuity')
  }
  if (has('tags')) out.tags = tagsMember(body.tags)
  return out
}
