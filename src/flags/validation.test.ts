import { describe, expect, test } from 'bun:test'
import { ApiError } from '../http/errors'
import { validateFilters, validateFlagBody, type WriteMethod } from './validation'

const ctx = (method: WriteMethod = 'POST', taken: string[] = []) => ({ method, keyTaken: async (k: string) => taken.includes(k) })
const person = (key: string, value: unknown, operator?: string) => ({ key, value, type: 'person', ...(operator ? { operator } : {}) })
const withProps = (...properties: unknown[]) => ({ groups: [{ properties, rollout_percentage: 100 }] })

async function error(body: unknown, c = ctx()): Promise<{ code: string; attr: string | null; detail: string }> {
  try {
    await validateFlagBody(body, c)
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    expect(e.status).toBe(400)
    expect(e.type).toBe('validation_error')
    return { code: e.code, attr: e.attr, detail: e.detail }
  }
  throw new Error('expected a validation error')
}

describe('flag body validation', () => {
  test('a minimal flag passes and keeps its filters exactly', async () => {
    const filters = { groups: [{ properties: [], rollout_percentage: 50 }], payloads: { true: '{"a":1}' } }
    expect(await validateFlagBody({ key: 'beta-feature', filters }, ctx())).toEqual({ key: 'beta-feature', filters })
  })

  test('key: required, blank, null, too long, taken, bad characters', async () => {
    expect(await error({ name: 'x' })).toEqual({ code: 'required', attr: 'key', detail: 'This field is required.' })
    expect(await error({ key: '   ' })).toMatchObject({ code: 'blank', attr: 'key' })
    expect(await error({ key: null })).toMatchObject({ code: 'null', attr: 'key' })
    expect(await error({ key: 'a'.repeat(401) })).toMatchObject({
      code: 'max_length',
      attr: 'key',
      detail: 'Ensure this field has no more than 400 characters.',
    })
    expect(await error({ key: 'taken' }, ctx('POST', ['taken']))).toEqual({
      code: 'unique',
      attr: 'key',
      detail: 'There is already a feature flag with this key.',
    })
    expect(await error({ key: 'has space' })).toEqual({
      code: 'invalid_key',
      attr: 'key',
      detail: 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.',
    })
    expect(await error({ key: 'ünï' })).toMatchObject({ code: 'invalid_key' })
    // uniqueness is checked before the pattern (validate_key's order)
    expect(await error({ key: 'a b' }, ctx('POST', ['a b']))).toMatchObject({ code: 'unique' })
  })

  test('a key is trimmed; PATCH needs no key', async () => {
    expect((await validateFlagBody({ key: ' spaced ' }, ctx())).key).toBe('spaced')
    expect(await validateFlagBody({ active: false }, ctx('PATCH'))).toEqual({ active: false })
    expect(await error({ active: false }, ctx('PUT'))).toMatchObject({ code: 'required', attr: 'key' })
  })

  test('fields are checked in PostHog order: name, key, filters, deleted, active', async () => {
    expect(await error({ name: true, key: 'bad key' })).toMatchObject({ attr: 'name' })
    expect(await error({ key: 'bad key', filters: 3 })).toMatchObject({ attr: 'key' })
    expect(await error({ key: 'ok', filters: 3, active: 'maybe' })).toMatchObject({ attr: 'filters', code: 'not_a_dict' })
    expect(await error({ key: 'ok', deleted: 'x', active: 'maybe' })).toMatchObject({ attr: 'deleted' })
  })

  test('booleans as DRF reads them', async () => {
    expect(await validateFlagBody({ key: 'k', active: 'false', deleted: 0, ensure_experience_continuity: 'yes' }, ctx())).toMatchObject({
      active: false,
      deleted: false,
      ensure_experience_continuity: true,
    })
    expect(await error({ key: 'k', active: 'maybe' })).toEqual({ code: 'invalid_input', attr: 'active', detail: 'Must be a valid boolean.' })
    expect(await error({ key: 'k', ensure_experience_continuity: null })).toMatchObject({ code: 'null', attr: 'ensure_experience_continuity' })
  })

  test('what Postgres cannot store is refused, not a 500', async () => {
    expect(await error({ key: 'k', name: 'a\u0000b' })).toMatchObject({ code: 'invalid_input', attr: 'name' })
    expect(await error({ key: 'k', filters: withProps(person('email', 'x\ud800')) })).toMatchObject({ code: 'invalid_input', attr: 'filters' })
    expect(await error({ key: 'k', filters: { ...withProps(), payloads: { 'true': '"\u0000"' } } })).toMatchObject({ attr: 'filters' })
  })

  test('the body must be an object', async () => {
    expect(await error([1, 2])).toMatchObject({ code: 'invalid_input', attr: null })
    expect(await error('text')).toMatchObject({ code: 'invalid_input', attr: null })
  })
})

describe('validate_filters', () => {
  const filtersError = (filters: unknown, method: WriteMethod = 'POST') => {
    try {
      validateFilters(filters, method)
    } catch (e) {
      if (!(e instanceof ApiError)) throw e
      expect(e.attr).toBe('filters')
      return { code: e.code, detail: e.detail }
    }
    throw new Error('expected a validation error')
  }

  test('groups are required on create; a PATCH without groups keeps the stored filters', () => {
    expect(filtersError({ payloads: {} })).toEqual({ code: 'invalid_input', detail: 'Feature flags must have at least one condition set (group).' })
    expect(validateFilters({ payloads: {} }, 'PATCH')).toBe('keep')
    expect(filtersError({ groups: 'all' })).toMatchObject({ code: 'invalid_input' })
  })

  test('person flags: only person, cohort and flag properties (cohorts and flags: see "references" below)', () => {
    expect(filtersError(withProps({ key: 'email', value: 'x', type: 'event' }))).toEqual({
      code: 'invalid_input',
      detail: 'Filters are not valid (can only use person, cohort, and flag properties)',
    })
    expect(filtersError(withProps({ key: 'email', value: 'x' }))).toMatchObject({ detail: 'Filters are not valid (can only use person, cohort, and flag properties)' })
    expect(filtersError(withProps({ key: 'id', value: 3, type: 'cohort' }))).toEqual({ code: 'cohort_does_not_exist', detail: 'Cohort with id 3 does not exist' })
  })

  test('group flags: only group properties of the flag group type', () => {
    const group = (props: unknown[]) => ({ aggregation_group_type_index: 0, groups: [{ properties: props, rollout_percentage: 100 }] })
    expect(validateFilters(group([{ key: 'plan', value: 'pro', type: 'group', group_type_index: 0 }]), 'POST')).not.toBe('keep')
    expect(filtersError(group([{ key: 'plan', value: 'pro', type: 'group', group_type_index: 1 }]))).toEqual({
      code: 'invalid_input',
      detail: 'Filters are not valid (can only use group properties)',
    })
    expect(filtersError(group([person('email', 'x')]))).toMatchObject({ detail: 'Filters are not valid (can only use group properties)' })
    expect(filtersError({ aggregation_group_type_index: 'company', groups: [] })).toMatchObject({ code: 'invalid_input' })
  })

  test('variants must sum to 100 and overrides must exist', () => {
    const mv = (variants: unknown[], groups: unknown[] = [{ properties: [], rollout_percentage: 100 }]) => ({ groups, multivariate: { variants } })
    expect(filtersError(mv([{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 40 }]))).toEqual({
      code: 'invalid_input',
      detail: 'Invalid variant definitions: Variant rollout percentages must sum to 100.',
    })
    expect(validateFilters(mv([{ key: 'a', rollout_percentage: 33.3 }, { key: 'b', rollout_percentage: 33.3 }, { key: 'c', rollout_percentage: 33.4 }]), 'POST')).not.toBe('keep')
    expect(filtersError(mv([{ key: 'a', rollout_percentage: 100 }], [{ properties: [], variant: 'b' }]))).toEqual({
      code: 'invalid_input',
      detail: 'Filters are not valid (variant override does not exist)',
    })
    expect(filtersError({ groups: [{ variant: 'a' }] })).toMatchObject({ detail: 'Filters are not valid (variant override does not exist)' })
    expect(filtersError(mv([{ rollout_percentage: 100 }]))).toMatchObject({ code: 'invalid_input' })
  })

  test('operators: unknown, unsupported, in/not_in only for cohorts', () => {
    expect(filtersError(withProps(person('a', 'x', 'sounds_like')))).toEqual({ code: 'invalid_operator', detail: 'Invalid operator: sounds_like' })
    expect(filtersError(withProps(person('a', '1.2.3', 'semver_gt')))).toEqual({ code: 'unsupported_operator', detail: 'Unsupported operator for feature flags: semver_gt' })
    expect(filtersError(withProps(person('a', [1], 'in')))).toEqual({
      code: 'invalid_operator',
      detail: "The 'in' operator is only valid for cohort properties, not 'person' properties.",
    })
  })

  test('value types: string operators, dates, list sizes', () => {
    for (const op of ['regex', 'not_regex', 'icontains', 'not_icontains', 'gt', 'gte', 'lt', 'lte']) {
      expect(filtersError(withProps(person('age', 30, op)))).toEqual({ code: 'invalid_value', detail: `Invalid value for operator ${op}: 30` })
    }
    expect(filtersError(withProps(person('tags', ['a', 'b'], 'icontains')))).toMatchObject({ detail: "Invalid value for operator icontains: ['a', 'b']" })
    expect(validateFilters(withProps(person('age', '30', 'gt')), 'POST')).not.toBe('keep')
    expect(filtersError(withProps(person('signup', 'not a date', 'is_date_before')))).toEqual({ code: 'invalid_date', detail: 'Invalid date value: not a date' })
    for (const ok of ['-7d', '2024-01-01', '2024-01-01T10:00:00Z']) {
      expect(validateFilters(withProps(person('signup', ok, 'is_date_after')), 'POST')).not.toBe('keep')
    }
    const many = Array.from({ length: 1001 }, (_, i) => `v${i}`)
    expect(filtersError(withProps(person('email', many)))).toEqual({
      code: 'invalid_input',
      detail: 'Property group expressions of type email cannot contain more than 1000 values.',
    })
    expect(validateFilters(withProps(person('email', many.slice(0, 1000))), 'POST')).not.toBe('keep')
  })

  test('regex patterns the linear-time engine cannot run are refused, naming the construct', () => {
    const cases: [string, string][] = [
      ['(a)\\1', 'backreferences'],
      ['(?<=@)example\\.com', 'lookbehind'],
      ['foo(?!bar)', 'lookahead'],
      ['(?>a+)', 'atomic groups'],
      ['a++', 'possessive quantifiers'],
    ]
    for (const [pattern, construct] of cases) {
      for (const op of ['regex', 'not_regex']) {
        const err = filtersError(withProps(person('email', pattern, op)))
        expect(err?.code).toBe('unsupported_regex')
        expect(err?.detail).toContain(construct)
      }
    }
    // nested quantifiers are fine (the engine is linear), and so is a pattern Python itself refuses (false, as PostHog)
    for (const ok of ['^([a-zA-Z0-9_.-]+)+@example\\.com$', '"plan":"pro"', '^(?=.*\\d).{8,}$', '[']) {
      expect(validateFilters(withProps(person('email', ok, 'regex')), 'POST')).not.toBe('keep')
    }
  })

  test('payloads: a dict, strings must be JSON, keys must be variants or "true"', () => {
    const base = { groups: [{ properties: [], rollout_percentage: 100 }] }
    expect(filtersError({ ...base, payloads: ['x'] })).toEqual({ code: 'invalid_input', detail: 'Payloads must be passed as a dictionary' })
    expect(filtersError({ ...base, payloads: { true: '{not json' } })).toEqual({ code: 'invalid_input', detail: 'Payload value is not valid JSON' })
    expect(filtersError({ ...base, payloads: { yes: '1' } })).toEqual({ code: 'invalid_input', detail: "Payload keys must be 'true' for boolean flags" })
    expect(filtersError({ ...base, multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] }, payloads: { b: '1' } })).toEqual({
      code: 'invalid_input',
      detail: 'Payload keys must match a variant key for multivariate flags',
    })
    expect(validateFilters({ ...base, payloads: { true: { color: 'blue' } } }, 'POST')).not.toBe('keep')
    expect(validateFilters({ ...base, payloads: { true: '"text"' } }, 'POST')).not.toBe('keep')
  })

  test('rollout percentages are numbers from 0 to 100', () => {
    expect(filtersError({ groups: [{ rollout_percentage: 'half' }] })).toMatchObject({ code: 'invalid_input' })
    expect(filtersError({ groups: [{ rollout_percentage: 101 }] })).toMatchObject({ code: 'invalid_input' })
    expect(validateFilters({ groups: [{ rollout_percentage: 0 }, { rollout_percentage: null }, {}] }, 'POST')).not.toBe('keep')
  })
})

describe('size limits of a flag', () => {
  const filtersError = (filters: unknown) => {
    try {
      validateFilters(filters, 'POST')
    } catch (e) {
      if (!(e instanceof ApiError)) throw e
      expect(e.attr).toBe('filters')
      return { code: e.code, detail: e.detail }
    }
    throw new Error('expected a validation error')
  }
  const group = (properties: unknown[] = []) => ({ properties, rollout_percentage: 100 })
  const prop = (i: number) => ({ key: `p${i}`, value: 'x', type: 'person' })

  test('conditions, properties per condition, variants, payload and filters size, name length: 400 limit_exceeded naming the limit', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ groups: Array.from({ length: 101 }, () => group()) }, 'at most 100 groups'],
      [{ groups: [group()], super_groups: Array.from({ length: 101 }, () => group()) }, 'at most 100 super groups'],
      [{ groups: [group(Array.from({ length: 101 }, (_, i) => prop(i)))] }, 'at most 100 properties'],
      [{ groups: [group()], multivariate: { variants: Array.from({ length: 101 }, (_, i) => ({ key: `v${i}`, rollout_percentage: i === 0 ? 100 : 0 })) } }, 'at most 100 variants'],
      [{ groups: [group()], payloads: { true: JSON.stringify('x'.repeat(70_000)) } }, 'payload may be at most 65536 bytes'],
      [{ groups: [group([{ key: 'email', type: 'person', value: 'x'.repeat(1_100_000) }])] }, 'at most 1048576 bytes'],
    ]
    for (const [filters, detail] of cases) {
      const e = filtersError(filters)
      expect(e?.code).toBe('limit_exceeded')
      expect(e?.detail).toContain(detail)
    }
    // at the limits: accepted
    expect(validateFilters({ groups: Array.from({ length: 100 }, () => group(Array.from({ length: 100 }, (_, i) => prop(i)))) }, 'POST')).not.toBe('keep')
  })
})

describe('references: cohorts and dependencies', () => {
  const cohort = (id: number, name: string, filters: unknown = { properties: { type: 'AND', values: [] } }, deleted = false) =>
    [id, { id, name, filters, is_static: false, deleted }] as const
  const flagRef = (id: number, key: string, dependencies: unknown[] = [], active = true) => ({ id, key, active, dependencies })
  const depends = (id: unknown, value: unknown = true, operator = 'flag_evaluates_to') => ({ key: id, type: 'flag', value, operator })
  const refs = (o: { cohorts?: (readonly [number, Record<string, unknown>])[]; flags?: ReturnType<typeof flagRef>[] } = {}) => ({
    method: 'POST' as WriteMethod,
    keyTaken: async () => false,
    references: async () => ({ cohorts: new Map(o.cohorts as never) as never, flags: o.flags ?? [] }),
  })
  const patchOf = (key: string, o: Parameters<typeof refs>[0]) => ({ ...refs(o), method: 'PATCH' as WriteMethod, currentKey: key })

  test('a cohort of the project passes, a deleted one too; an unknown one is cohort_does_not_exist', async () => {
    const c = refs({ cohorts: [cohort(3, 'Pros'), cohort(4, 'Gone', {}, true)] })
    expect(await validateFlagBody({ key: 'f', filters: withProps({ key: 'id', type: 'cohort', value: 3 }) }, c)).toMatchObject({ key: 'f' })
    expect(await validateFlagBody({ key: 'f', filters: withProps({ key: 'id', type: 'cohort', value: '4', operator: 'not_in' }) }, c)).toMatchObject({ key: 'f' })
    expect(await error({ key: 'f', filters: withProps({ key: 'id', type: 'cohort', value: 9 }) }, c)).toEqual({
      code: 'cohort_does_not_exist',
      attr: 'filters',
      detail: 'Cohort with id 9 does not exist',
    })
  })
  test('a cohort with a behavioural filter, itself or in a cohort it nests: behavioral_cohort_found', async () => {
    const behavioural = { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: '$pageview', type: 'behavioral', value: 'performed_event' }] }] } }
    const nests = { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'id', type: 'cohort', value: 5 }] }] } }
    const c = refs({ cohorts: [cohort(5, 'Viewers', behavioural), cohort(6, 'Outer', nests)] })
    for (const id of [5, 6]) {
      expect(await error({ key: 'f', filters: withProps({ key: 'id', type: 'cohort', value: id }) }, c)).toEqual({
        code: 'behavioral_cohort_found',
        attr: 'filters',
        detail: "Cohort 'Viewers' with filters on events cannot be used in feature flags.",
      })
    }
  })
  test('dependencies: the operator, an id (not a key), an existing active flag', async () => {
    const c = refs({ flags: [flagRef(1, 'base'), flagRef(2, 'off', [], false)] })
    expect(await validateFlagBody({ key: 'f', filters: withProps(depends('1')) }, c)).toMatchObject({ key: 'f' })
    expect(await error({ key: 'f', filters: withProps(depends('1', true, 'exact')) }, c)).toEqual({
      code: 'invalid_input',
      attr: 'filters',
      detail: "Flag properties must use the 'flag_evaluates_to' operator",
    })
    expect(await error({ key: 'f', filters: withProps(depends('base')) }, c)).toMatchObject({
      detail: "Flag dependencies must reference flag IDs (integers), not flag keys. Invalid reference: 'base'",
    })
    expect(await error({ key: 'f', filters: withProps(depends('77')) }, c)).toMatchObject({ detail: 'Flag dependency references non-existent flag with ID 77' })
    expect(await error({ key: 'f', filters: withProps(depends(2)) }, c)).toMatchObject({
      detail: "Cannot create dependency on disabled flag 'off' (ID: 2). Flag dependencies must reference active flags only.",
    })
  })
  test('a flag cannot depend on itself, nor close a cycle', async () => {
    // a ← b ← c (b depends on a, c on b); making a depend on c closes the loop
    const flags = [flagRef(1, 'flag_a'), flagRef(2, 'flag_b', ['1']), flagRef(3, 'flag_c', [2])]
    expect(await error({ filters: withProps(depends('1')) }, patchOf('flag_a', { flags }))).toMatchObject({ detail: "Feature flag 'flag_a' cannot depend on itself" })
    expect(await error({ filters: withProps(depends('3')) }, patchOf('flag_a', { flags }))).toEqual({
      code: 'invalid_input',
      attr: 'filters',
      detail: 'Circular dependency detected: flag_a → flag_c → flag_b → flag_a',
    })
    // depending on the end of the chain from a new flag is fine
    expect(await validateFlagBody({ key: 'flag_d', filters: withProps(depends('3')) }, refs({ flags }))).toMatchObject({ key: 'flag_d' })
  })
  test('group flags may not use cohorts or flags', async () => {
    const group = { aggregation_group_type_index: 0, groups: [{ properties: [depends('1')] }] }
    expect(await error({ key: 'f', filters: group }, refs({ flags: [flagRef(1, 'base')] }))).toMatchObject({ detail: 'Filters are not valid (can only use group properties)' })
  })
})
