import { describe, expect, test } from 'bun:test'
import { compileFlag, evaluateFlag, evaluateFlags, type EvalInput, type FlagDefinition, type FlagOutcome, storedDataNeeded } from './index'

// Hash values used below are the verified PostHog values (see hash.test.ts), e.g.
//   beta-feature.example_id 0.2093   beta-feature.another_id 0.9657   beta-feature.other_id 0.4346
//   beta-feature.test_id 0.9418      beta-feature.example_idvariant 0.6364  beta-feature.test_idvariant 0.7787
//   beta-feature.another_idvariant 0.5238  beta-feature.11variant 0.1609  beta-feature.3variant 0.9964
//   multivariate-flag.example_idvariant 0.4100  multivariate-flag.other_idvariant 0.9412
//   group-flag.amazon 0.5433   holdout-example_id 0.9402   holdout-example_id2 0.6293

const NOW = new Date('2020-01-01T12:01:20.134Z')

function flag(key: string, filters: Record<string, unknown>, extra: Partial<FlagDefinition> = {}): FlagDefinition {
  return { id: 1, key, active: true, deleted: false, filters, ensure_experience_continuity: false, version: 1, ...extra }
}

function input(distinctId: string, over: Partial<EvalInput> = {}): EvalInput {
  return {
    distinctId,
    groups: {},
    groupTypeNames: new Map([
      [0, 'organization'],
      [1, 'project'],
    ]),
    personOverrides: { distinct_id: distinctId },
    groupOverrides: {},
    storedPerson: undefined,
    storedGroups: undefined,
    now: NOW,
    ...over,
  }
}

/** A flat view of an outcome: the result fields on success, `{ok: false, key, error}` otherwise. */
interface View {
  enabled?: boolean
  variant?: string | null
  reason?: string
  index?: number | null
  payload?: unknown
  ok?: false
  key?: string
  error?: string
}

function run(def: FlagDefinition, inp: EvalInput): View {
  const out = evaluateFlag(compileFlag(def), inp)
  if (!out.ok) return out
  const r = out.result
  return { enabled: r.enabled, variant: r.variant, reason: r.reason, index: r.conditionIndex, payload: r.payload }
}

const ok = (enabled: boolean, variant: string | null, reason: string, index: number | null, payload?: unknown): View => ({ enabled, variant, reason, index, payload })

const email = (value: unknown, operator = 'exact') => ({ key: 'email', type: 'person', value, operator })

const THREE_VARIANTS = {
  variants: [
    { key: 'first-variant', name: 'First', rollout_percentage: 50 },
    { key: 'second-variant', name: 'Second', rollout_percentage: 25 },
    { key: 'third-variant', name: 'Third', rollout_percentage: 25 },
  ],
}

describe('rollout', () => {
  test('an empty condition matches everyone', () => {
    expect(run(flag('beta-feature', { groups: [{}] }), input('another_id'))).toEqual(ok(true, null, 'condition_match', 0))
  })
  test('rollout 0 fails everyone (hash 0.2093 > 0)', () => {
    expect(run(flag('beta-feature', { groups: [{ rollout_percentage: 0 }] }), input('example_id'))).toEqual(ok(false, null, 'out_of_rollout_bound', 0))
  })
  test('rollout 100 passes everyone (hash 0.9657 ≤ 1)', () => {
    expect(run(flag('beta-feature', { groups: [{ rollout_percentage: 100 }] }), input('another_id'))).toEqual(ok(true, null, 'condition_match', 0))
  })
  test('50%: example_id (0.2093) in, another_id (0.9657) out', () => {
    const f = flag('beta-feature', { groups: [{ properties: [], rollout_percentage: 50 }] })
    expect(run(f, input('example_id'))).toEqual(ok(true, null, 'condition_match', 0))
    expect(run(f, input('another_id'))).toEqual(ok(false, null, 'out_of_rollout_bound', 0))
  })
  test('the check is a strict hash > pct/100: equality is still in the rollout', () => {
    // 20.93039334578348 / 100 === 0.2093039334578348 exactly (the example_id hash)
    expect(20.93039334578348 / 100).toBe(0.2093039334578348)
    expect(run(flag('beta-feature', { groups: [{ rollout_percentage: 20.93039334578348 }] }), input('example_id'))).toEqual(ok(true, null, 'condition_match', 0))
    // the next double down divides to just below the hash
    expect(run(flag('beta-feature', { groups: [{ rollout_percentage: 20.930393345783475 }] }), input('example_id'))).toEqual(
      ok(false, null, 'out_of_rollout_bound', 0),
    )
  })
  test('properties that pass with no rollout skip the rollout check', () => {
    const f = flag('beta-feature', { groups: [{ properties: [email('a@b.c')], rollout_percentage: null }] })
    expect(run(f, input('another_id', { personOverrides: { email: 'a@b.c' } }))).toEqual(ok(true, null, 'condition_match', 0))
  })
  test('properties that pass are then subject to the rollout', () => {
    const f = flag('beta-feature', { groups: [{ properties: [email('a@b.c')], rollout_percentage: 50 }] })
    expect(run(f, input('another_id', { personOverrides: { email: 'a@b.c' } }))).toEqual(ok(false, null, 'out_of_rollout_bound', 0))
    expect(run(f, input('example_id', { personOverrides: { email: 'a@b.c' } }))).toEqual(ok(true, null, 'condition_match', 0))
  })
  test('empty groups never match (no_condition_match, index 0)', () => {
    expect(run(flag('beta-feature', { groups: [] }), input('example_id'))).toEqual(ok(false, null, 'no_condition_match', 0))
    expect(run(flag('beta-feature', { groups: null }), input('example_id'))).toEqual(ok(false, null, 'no_condition_match', 0))
  })
})

describe('variants', () => {
  test('the lookup table picks by the variant hash: 50/25/25', () => {
    const f = flag('beta-feature', { groups: [{ rollout_percentage: 100 }], multivariate: THREE_VARIANTS })
    expect(run(f, input('11')).variant).toBe('first-variant') // 0.1609
    expect(run(f, input('example_id')).variant).toBe('second-variant') // 0.6364
    expect(run(f, input('another_id')).variant).toBe('second-variant') // 0.5238
    expect(run(f, input('test_id')).variant).toBe('third-variant') // 0.7787
    expect(run(f, input('3')).variant).toBe('third-variant') // 0.9964
  })
  test('the variant hash is salted and keyed by the flag: multivariate-flag', () => {
    const f = flag('multivariate-flag', { groups: [{ properties: [], rollout_percentage: null }], multivariate: THREE_VARIANTS })
    expect(run(f, input('example_id'))).toEqual(ok(true, 'first-variant', 'condition_match', 0)) // 0.4100
    expect(run(f, input('other_id'))).toEqual(ok(true, 'third-variant', 'condition_match', 0)) // 0.9412
  })
  test('variants summing to less than 100 can leave no variant: the flag is just true', () => {
    const f = flag('beta-feature', { groups: [{}], multivariate: { variants: [{ key: 'a', rollout_percentage: 20 }, { key: 'b', rollout_percentage: 20 }] } })
    expect(run(f, input('example_id'))).toEqual(ok(true, null, 'condition_match', 0)) // 0.6364 ≥ 0.4
    expect(run(f, input('11'))).toEqual(ok(true, 'a', 'condition_match', 0)) // 0.1609 < 0.2
  })
  test('a condition variant naming an existing variant overrides the lookup', () => {
    const f = flag('beta-feature', { groups: [{ variant: 'third-variant' }], multivariate: THREE_VARIANTS })
    expect(run(f, input('11')).variant).toBe('third-variant')
  })
  test('an unknown override ("second???") is ignored', () => {
    const f = flag('beta-feature', { groups: [{ variant: 'second???' }], multivariate: THREE_VARIANTS })
    expect(run(f, input('11')).variant).toBe('first-variant')
  })
  test('multivariate null, not an object, or variants not a list: no variants', () => {
    for (const multivariate of [null, 'x', { variants: null }, { variants: {} }]) {
      expect(run(flag('beta-feature', { groups: [{}], multivariate }), input('11'))).toEqual(ok(true, null, 'condition_match', 0))
    }
  })
})

describe('condition order and condition_index', () => {
  test('conditions with a variant are evaluated first; the original index is reported', () => {
    const f = flag('beta-feature', {
      groups: [{ properties: [email('a@b.c')] }, { properties: [email('a@b.c')], variant: 'third-variant' }],
      multivariate: THREE_VARIANTS,
    })
    expect(run(f, input('11', { personOverrides: { email: 'a@b.c' } }))).toEqual(ok(true, 'third-variant', 'condition_match', 1))
  })
  test('the sort is stable among conditions with and without variants', () => {
    const f = flag('beta-feature', {
      groups: [{ properties: [email('x')] }, { variant: 'first-variant', rollout_percentage: 0 }, { variant: 'second-variant' }, {}],
      multivariate: THREE_VARIANTS,
    })
    // order tried: 1 (out of rollout), 2 (match)
    expect(run(f, input('example_id', { personOverrides: { email: 'y' } }))).toEqual(ok(true, 'second-variant', 'condition_match', 2))
  })
})

describe('reasons when nothing matched', () => {
  test('nine no_condition_match conditions report index 8 (ties move to the later condition)', () => {
    const groups = Array.from({ length: 9 }, () => ({ properties: [email('nope')] }))
    expect(run(flag('beta-feature', { groups }), input('example_id', { personOverrides: { email: 'x' } }))).toEqual(
      ok(false, null, 'no_condition_match', 8),
    )
  })
  test('[email mismatch, 50% miss] reports out_of_rollout_bound at index 1 (test_complicated_flag)', () => {
    const f = flag('beta-feature', { groups: [{ properties: [email('test@posthog.com')], rollout_percentage: 100 }, { rollout_percentage: 50 }] })
    expect(run(f, input('another_id', { personOverrides: { email: 'other@x.com' } }))).toEqual(ok(false, null, 'out_of_rollout_bound', 1))
    expect(run(f, input('test_id', { personOverrides: { email: 'test@posthog.com' } }))).toEqual(ok(true, null, 'condition_match', 0))
    expect(run(f, input('example_id', { personOverrides: { email: 'other@x.com' } }))).toEqual(ok(true, null, 'condition_match', 1))
  })
  test('a higher-priority reason is kept over a later lower one', () => {
    const f = flag('beta-feature', { groups: [{ rollout_percentage: 0 }, { properties: [email('nope')] }] })
    expect(run(f, input('example_id', { personOverrides: { email: 'x' } }))).toEqual(ok(false, null, 'out_of_rollout_bound', 0))
  })
  test('equal reasons: the later one wins', () => {
    const f = flag('beta-feature', { groups: [{ rollout_percentage: 0 }, { properties: [email('nope')] }, { rollout_percentage: 1 }] })
    expect(run(f, input('example_id', { personOverrides: { email: 'x' } }))).toEqual(ok(false, null, 'out_of_rollout_bound', 2))
  })
})

describe('legacy and blank flags', () => {
  test('filters without `groups` use filters.properties and the flag rollout_percentage', () => {
    const f = flag('beta-feature', {}, { rollout_percentage: 50 })
    expect(run(f, input('example_id'))).toEqual(ok(true, null, 'condition_match', 0)) // 0.2093
    expect(run(f, input('another_id'))).toEqual(ok(false, null, 'out_of_rollout_bound', 0)) // 0.9657
  })
  test('legacy properties are honoured', () => {
    const f = flag('beta-feature', { properties: [email('a@b.c')] }, { rollout_percentage: null })
    expect(run(f, input('x', { personOverrides: { email: 'a@b.c' } }))).toEqual(ok(true, null, 'condition_match', 0))
    expect(run(f, input('x', { personOverrides: { email: 'z' } }))).toEqual(ok(false, null, 'no_condition_match', 0))
  })
  test('a blank flag (filters {}, no rollout) is on for everyone', () => {
    expect(run(flag('beta-feature', {}), input('another_id'))).toEqual(ok(true, null, 'condition_match', 0))
  })
  test('a legacy flag has no variants, payloads or aggregation even if filters carry them', () => {
    const f = flag('beta-feature', { multivariate: THREE_VARIANTS, payloads: { true: 'p' }, aggregation_group_type_index: 0 })
    expect(run(f, input('11'))).toEqual(ok(true, null, 'condition_match', 0, undefined))
  })
  test('the flag-level rollout is ignored once `groups` exists', () => {
    expect(run(flag('beta-feature', { groups: [{}] }, { rollout_percentage: 0 }), input('example_id')).enabled).toBe(true)
  })
})

describe('group flags', () => {
  const groupFlag = (rollout: number | null, extra: Record<string, unknown> = {}) =>
    flag('group-flag', { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: rollout }], ...extra })
  test('hash on the group key: amazon 0.5433', () => {
    expect(run(groupFlag(50), input('u', { groups: { organization: 'amazon' } }))).toEqual(ok(false, null, 'out_of_rollout_bound', 0))
    expect(run(groupFlag(60), input('u', { groups: { organization: 'amazon' } }))).toEqual(ok(true, null, 'condition_match', 0))
  })
  test('no group of that type in the request: no_group_type with a null index', () => {
    expect(run(groupFlag(100), input('u'))).toEqual(ok(false, null, 'no_group_type', null))
    expect(run(groupFlag(100), input('u', { groups: { project: 'p' } }))).toEqual(ok(false, null, 'no_group_type', null))
  })
  test('an index missing from the mapping: no_group_type', () => {
    const f = flag('group-flag', { aggregation_group_type_index: 4, groups: [{}] })
    expect(run(f, input('u', { groups: { organization: 'amazon' } }))).toEqual(ok(false, null, 'no_group_type', null))
  })
  test('group properties come from the group overrides, not the person', () => {
    const f = flag('group-flag', { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'name', type: 'group', group_type_index: 0, value: 'Amazon' }] }] })
    const inp = input('u', { groups: { organization: 'amazon' }, groupOverrides: { organization: { $group_key: 'amazon', name: 'amazon' } }, personOverrides: { name: 'x' } })
    expect(run(f, inp)).toEqual(ok(true, null, 'condition_match', 0))
  })
  test('group stored rows: undefined → needs_stored_data, null → no match', () => {
    const f = flag('group-flag', { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'plan', type: 'group', value: 'pro' }] }] })
    const base = { groups: { organization: 'amazon' }, groupOverrides: { organization: { $group_key: 'amazon' } } }
    expect(run(f, input('u', base))).toEqual({ ok: false, key: 'group-flag', error: 'needs_stored_data' })
    expect(run(f, input('u', { ...base, storedGroups: new Map([['organization', null]]) }))).toEqual(ok(false, null, 'no_condition_match', 0))
    expect(run(f, input('u', { ...base, storedGroups: new Map([['organization', { plan: 'pro' }]]) }))).toEqual(ok(true, null, 'condition_match', 0))
  })
})

describe('payloads', () => {
  test('a match without variant uses payloads["true"]', () => {
    expect(run(flag('beta-feature', { groups: [{}], payloads: { true: '{"a":1}' } }), input('x')).payload).toBe('{"a":1}')
  })
  test('a variant match uses payloads[variant], stored value returned as is', () => {
    const f = flag('multivariate-flag', { groups: [{}], multivariate: THREE_VARIANTS, payloads: { 'first-variant': { color: 'blue' }, true: 'no' } })
    expect(run(f, input('example_id')).payload).toEqual({ color: 'blue' })
    expect(run(f, input('other_id')).payload).toBeUndefined() // third-variant has none
  })
  test('no match, no payload', () => {
    expect(run(flag('beta-feature', { groups: [{ rollout_percentage: 0 }], payloads: { true: 'p' } }), input('example_id')).payload).toBeUndefined()
  })
  test('falsy payloads are returned as stored (the v3 caller drops them)', () => {
    for (const p of [0, '', false, null]) {
      expect(run(flag('beta-feature', { groups: [{}], payloads: { true: p } }), input('x')).payload).toBe(p)
    }
  })
  test('payloads keys are own properties only', () => {
    const f = flag('beta-feature', { groups: [{ variant: 'constructor' }], multivariate: { variants: [{ key: 'constructor', rollout_percentage: 100 }] }, payloads: {} })
    expect(run(f, input('x')).payload).toBeUndefined()
  })
})

describe('super conditions (vectors from PostHog\'s test_super_condition_* tests)', () => {
  const conditions = [
    { properties: [email('fake@posthog.com')], rollout_percentage: 0 },
    { properties: [email('test@posthog.com')], rollout_percentage: 100 },
    { rollout_percentage: 50 },
  ]
  const superFlag = (superGroup: Record<string, unknown>, payloads?: Record<string, unknown>) =>
    flag('beta-feature', { groups: conditions, super_groups: [superGroup], ...(payloads ? { payloads } : {}) })
  const isEnabled = (value: unknown) => ({ properties: [{ key: 'is_enabled', type: 'person', operator: 'exact', value }], rollout_percentage: 100 })
  const person = { email: 'test@posthog.com', is_enabled: true }

  test('a person with the property set gets the super condition value', () => {
    expect(run(superFlag(isEnabled(['true'])), input('test_id', { storedPerson: person }))).toEqual(ok(true, null, 'super_condition_value', 0))
    expect(run(superFlag(isEnabled('true')), input('test_id', { storedPerson: { ...person, is_enabled: 'true' } }))).toEqual(ok(true, null, 'super_condition_value', 0))
  })
  test('the value can be false (test_super_condition_matches_and_false)', () => {
    expect(run(superFlag(isEnabled(false)), input('test_id', { storedPerson: person }))).toEqual(ok(false, null, 'super_condition_value', 0))
  })
  test('no person row: the super condition is not set, the release conditions decide', () => {
    expect(run(superFlag(isEnabled(['true'])), input('example_id', { storedPerson: null }))).toEqual(ok(true, null, 'condition_match', 2)) // 0.2093
    expect(run(superFlag(isEnabled(['true'])), input('another_id', { storedPerson: null }))).toEqual(ok(false, null, 'out_of_rollout_bound', 2)) // 0.9657
  })
  test('property not set: fall through (test_super_condition_is_not_set)', () => {
    expect(run(superFlag(isEnabled(true)), input('test_id', { storedPerson: { email: 'test@posthog.com' } }))).toEqual(ok(true, null, 'condition_match', 1))
  })
  test('a super group without properties is a rollout that decides at once', () => {
    expect(run(superFlag({ properties: [], rollout_percentage: 100 }), input('another_id'))).toEqual(ok(true, null, 'super_condition_value', 0))
    expect(run(superFlag({ properties: [], rollout_percentage: 50 }), input('test_id'))).toEqual(ok(false, null, 'out_of_rollout_bound', 0)) // 0.9418
    expect(run(superFlag({ properties: [], rollout_percentage: 50 }), input('example_id'))).toEqual(ok(true, null, 'super_condition_value', 0)) // 0.2093
  })
  test('overrides can set the super property without stored data; the payload is payloads["true"]', () => {
    const f = superFlag(isEnabled(true), { true: 'super-payload' })
    expect(run(f, input('another_id', { personOverrides: { is_enabled: true } }))).toEqual(ok(true, null, 'super_condition_value', 0, 'super-payload'))
    expect(run(f, input('another_id', { personOverrides: { is_enabled: false } }))).toEqual(ok(false, null, 'super_condition_value', 0, undefined))
  })
  test('a super property neither overridden nor loaded: needs_stored_data', () => {
    expect(run(superFlag(isEnabled(true)), input('test_id'))).toEqual({ ok: false, key: 'beta-feature', error: 'needs_stored_data' })
  })
  test('a super condition match has no variant even on a multivariate flag', () => {
    const f = flag('beta-feature', { groups: [{}], multivariate: THREE_VARIANTS, super_groups: [{ properties: [], rollout_percentage: 100 }] })
    expect(run(f, input('11')).variant).toBeNull()
  })
})

describe('holdouts', () => {
  const holdoutFlag = (holdout: Record<string, unknown>) =>
    flag('beta-feature', {
      groups: [{ rollout_percentage: 100 }],
      multivariate: { variants: [...THREE_VARIANTS.variants.map((v) => ({ ...v })), { key: 'holdout-1', rollout_percentage: 0 }] },
      holdout_groups: [holdout],
      payloads: { 'holdout-1': 'held', 'second-variant': 'second' },
    })
  test('inside the holdout (holdout-example_id 0.9402 ≤ 0.95): holdout variant, index 0, its payload', () => {
    expect(run(holdoutFlag({ properties: [], rollout_percentage: 95, variant: 'holdout-1' }), input('example_id'))).toEqual(
      ok(true, 'holdout-1', 'holdout_condition_value', 0, 'held'),
    )
  })
  test('outside the holdout (0.9402 > 0.10): the release conditions decide', () => {
    expect(run(holdoutFlag({ properties: [], rollout_percentage: 10, variant: 'holdout-1' }), input('example_id'))).toEqual(
      ok(true, 'second-variant', 'condition_match', 0, 'second'),
    )
  })
  test('a holdout without rollout holds everyone; without a variant it uses the lookup table', () => {
    expect(run(holdoutFlag({ properties: [], rollout_percentage: null }), input('example_id'))).toEqual(
      ok(true, 'second-variant', 'holdout_condition_value', 0, 'second'),
    )
  })
  test('holdout groups with properties are ignored', () => {
    expect(run(holdoutFlag({ properties: [email('x')], rollout_percentage: 100, variant: 'holdout-1' }), input('example_id', { personOverrides: { email: 'x' } })).reason).toBe(
      'condition_match',
    )
  })
  test('the holdout hash depends on the identifier only (example_id2 0.6293 ≤ 0.7)', () => {
    expect(run(holdoutFlag({ properties: [], rollout_percentage: 70, variant: 'holdout-1' }), input('example_id2')).reason).toBe('holdout_condition_value')
  })
})

describe('stored data', () => {
  const f = (props: unknown[], extra: Record<string, unknown> = {}) => flag('beta-feature', { groups: [{ properties: props, ...extra }] })
  test('a condition whose keys are all overridden never needs stored data', () => {
    expect(run(f([email('a')]), input('x', { personOverrides: { email: 'a' } }))).toEqual(ok(true, null, 'condition_match', 0))
  })
  test('a key missing from the overrides with the person not loaded: needs_stored_data', () => {
    expect(run(f([email('a')]), input('x'))).toEqual({ ok: false, key: 'beta-feature', error: 'needs_stored_data' })
  })
  test('no person row: only pure is_not / is_not_set conditions match (then the rollout applies)', () => {
    const none = { storedPerson: null }
    expect(run(f([email('a', 'is_not')]), input('x', none))).toEqual(ok(true, null, 'condition_match', 0))
    expect(run(f([email(null, 'is_not_set')]), input('x', none))).toEqual(ok(true, null, 'condition_match', 0))
    expect(run(f([email('a', 'is_not'), { key: 'name', operator: 'is_not_set' }]), input('x', none)).enabled).toBe(true)
    expect(run(f([email('a', 'is_not'), { key: 'name', value: 'n' }]), input('x', none))).toEqual(ok(false, null, 'no_condition_match', 0))
    expect(run(f([email('a')]), input('x', none))).toEqual(ok(false, null, 'no_condition_match', 0))
    expect(run(f([email('a', 'is_not')], { rollout_percentage: 50 }), input('another_id', none))).toEqual(ok(false, null, 'out_of_rollout_bound', 0))
  })
  test('the pure is_not rule applies even when an overridden key would fail (the server checks existence first)', () => {
    expect(run(f([email('a', 'is_not'), { key: 'name', operator: 'is_not_set' }]), input('x', { storedPerson: null, personOverrides: { email: 'a' } })).enabled).toBe(true)
  })
  test('stored values are merged under the overrides', () => {
    const inp = (over: Record<string, unknown>) => input('x', { storedPerson: { email: 'stored@x', plan: 'pro' }, personOverrides: over })
    const cond = [email('over@x'), { key: 'plan', value: 'pro' }]
    expect(run(f(cond), inp({ email: 'over@x' })).enabled).toBe(true)
    expect(run(f(cond), inp({})).enabled).toBe(false)
  })
  test('missing stored keys: is_not / not_icontains / not_regex / is_not_set pass, the rest fail', () => {
    const inp = input('x', { storedPerson: { other: 1 } })
    const rows: [string, unknown, boolean][] = [
      ['exact', 'a', false],
      ['is_not', 'a', true],
      ['icontains', 'a', false],
      ['not_icontains', 'a', true],
      ['regex', 'a', false],
      ['not_regex', 'a', true],
      ['gt', 1, false],
      ['lt', 1, false],
      ['is_set', null, false],
      ['is_not_set', null, true],
      ['is_date_before', '2030-01-01', false],
    ]
    for (const [operator, value, expected] of rows) expect(run(f([{ key: 'k', operator, value }]), inp).enabled).toBe(expected)
  })
  test('a stored JSON null is missing for value operators but set for is_set', () => {
    const inp = input('x', { storedPerson: { k: null } })
    expect(run(f([{ key: 'k', operator: 'exact', value: 'None' }]), inp).enabled).toBe(false)
    expect(run(f([{ key: 'k', operator: 'is_not', value: 'a' }]), inp).enabled).toBe(true)
    expect(run(f([{ key: 'k', operator: 'is_set' }]), inp).enabled).toBe(true)
    expect(run(f([{ key: 'k', operator: 'is_not_set' }]), inp).enabled).toBe(false)
  })
  test('an overridden null is a value: str(None) == "None"', () => {
    expect(run(f([{ key: 'k', operator: 'exact', value: 'None' }]), input('x', { personOverrides: { k: null } })).enabled).toBe(true)
  })
  test('evaluation stops at the first matching condition: later conditions needing data do not error', () => {
    const g = flag('beta-feature', { groups: [{ properties: [email('a')] }, { properties: [{ key: 'plan', value: 'pro' }] }] })
    expect(run(g, input('x', { personOverrides: { email: 'a' } }))).toEqual(ok(true, null, 'condition_match', 0))
    expect(run(g, input('x', { personOverrides: { email: 'b' } }))).toEqual({ ok: false, key: 'beta-feature', error: 'needs_stored_data' })
  })
  test('a filter on a cohort the project does not have never matches, and needs no stored data (cohorts.test.ts has the rest)', () => {
    const cohort = { key: 'id', type: 'cohort', value: 5 }
    expect(run(f([cohort]), input('x'))).toEqual(ok(false, null, 'no_condition_match', 0))
    expect(run(f([cohort]), input('x', { storedPerson: {} }))).toEqual(ok(false, null, 'no_condition_match', 0))
    expect(run(flag('beta-feature', { groups: [{ properties: [cohort] }, {}] }), input('x', { storedPerson: {} }))).toEqual(ok(true, null, 'condition_match', 1))
  })
})

describe('experience continuity', () => {
  test('with ensure_experience_continuity, a hash key override replaces the distinct id', () => {
    const def = flag('beta-feature', { groups: [{ rollout_percentage: 30 }] }, { ensure_experience_continuity: true })
    expect(run(def, input('another_id')).enabled).toBe(false) // 0.9657
    expect(run(def, input('another_id', { hashKeyOverrides: { 'beta-feature': 'example_id' } })).enabled).toBe(true) // 0.2093
  })
  test('without the setting, overrides are ignored', () => {
    const def = flag('beta-feature', { groups: [{ rollout_percentage: 30 }] })
    expect(run(def, input('another_id', { hashKeyOverrides: { 'beta-feature': 'example_id' } })).enabled).toBe(false)
  })
})

describe('evaluateFlags', () => {
  test('skips inactive and deleted flags, keeps the order of the rest', () => {
    const flags = [
      compileFlag(flag('a', { groups: [{}] })),
      compileFlag(flag('b', { groups: [{}] }, { active: false })),
      compileFlag(flag('c', { groups: [{}] }, { deleted: true })),
      compileFlag(flag('d', { groups: [{ rollout_percentage: 0 }] })),
    ]
    const out = evaluateFlags(flags, input('x'))
    expect(out.map((o) => (o.ok ? `${o.result.key}:${o.result.enabled}` : o.key))).toEqual(['a:true', 'd:false'])
  })
  test('a broken flag errors alone; the others are evaluated', () => {
    const flags = [compileFlag(flag('good', { groups: [{}] })), compileFlag(flag('bad', { groups: 'nope' })), compileFlag(flag('good2', {}))]
    const out: FlagOutcome[] = evaluateFlags(flags, input('x'))
    expect(out).toEqual([
      { ok: true, result: { key: 'good', enabled: true, variant: null, reason: 'condition_match', conditionIndex: 0, payload: undefined } },
      { ok: false, key: 'bad', error: 'evaluation_error' },
      { ok: true, result: { key: 'good2', enabled: true, variant: null, reason: 'condition_match', conditionIndex: 0, payload: undefined } },
    ])
  })
})

describe('compileFlag never throws on garbage', () => {
  const garbage: unknown[] = [
    null,
    undefined,
    42,
    'flag',
    [],
    {},
    { key: 1 },
    { key: 'k', filters: null },
    { key: 'k', filters: 'x' },
    { key: 'k', filters: [] },
    { key: 'k', filters: { groups: { a: 1 } } },
    { key: 'k', filters: { groups: [1, 2] } },
    { key: 'k', filters: { groups: 'abc' } },
    { key: 'k', filters: { super_groups: 'x', groups: [] } },
    { key: 'k', filters: { holdout_groups: { a: 1 }, groups: [] } },
  ]
  for (const g of garbage) {
    test(`${JSON.stringify(g) ?? 'undefined'} compiles to an evaluation error`, () => {
      const c = compileFlag(g as FlagDefinition)
      const out = evaluateFlag(c, input('x'))
      expect(out.ok).toBe(false)
      if (!out.ok) expect(out.error).toBe('evaluation_error')
    })
  }

  test('breakage is reported only when evaluation reaches it (as on the server)', () => {
    const brokenSecond = flag('k', { groups: [{}, { properties: 'abc' }] })
    expect(run(brokenSecond, input('x')).enabled).toBe(true)
    const brokenFirst = flag('k', { groups: [{ properties: 'abc' }, {}] })
    expect(run(brokenFirst, input('x'))).toEqual({ ok: false, key: 'k', error: 'evaluation_error' })
    const badRollout = flag('k', { groups: [{ rollout_percentage: '50' }] })
    expect(run(badRollout, input('x'))).toEqual({ ok: false, key: 'k', error: 'evaluation_error' })
    const badVariants = flag('k', { groups: [{ rollout_percentage: 0 }], multivariate: { variants: [{ rollout_percentage: 100 }] } })
    expect(run(badVariants, input('example_id'))).toEqual(ok(false, null, 'out_of_rollout_bound', 0)) // never matched: fine
    expect(run(flag('k', { groups: [{}], multivariate: { variants: [{ rollout_percentage: 100 }] } }), input('x'))).toEqual({ ok: false, key: 'k', error: 'evaluation_error' })
    expect(run(flag('k', { groups: [{}], payloads: ['x'] }), input('x'))).toEqual({ ok: false, key: 'k', error: 'evaluation_error' })
  })

  test('property filters without a key, non-object properties and odd operators', () => {
    expect(run(flag('k', { groups: [{ properties: [{ value: 1 }] }] }), input('x'))).toEqual({ ok: false, key: 'k', error: 'evaluation_error' })
    expect(run(flag('k', { groups: [{ properties: [null] }] }), input('x'))).toEqual({ ok: false, key: 'k', error: 'evaluation_error' })
    expect(run(flag('k', { groups: [{ properties: [{ key: 'a', operator: 7, value: 1 }] }] }), input('x', { personOverrides: { a: 1 } })).enabled).toBe(false)
  })

  test('property groups ({type, values}) are flattened and ANDed', () => {
    const def = flag('k', { groups: [{ properties: { type: 'OR', values: [{ type: 'AND', values: [email('a')] }, { key: 'n', value: 1 }] } }] })
    expect(run(def, input('x', { personOverrides: { email: 'a', n: 1 } })).enabled).toBe(true)
    expect(run(def, input('x', { personOverrides: { email: 'a', n: 2 } })).enabled).toBe(false)
  })

  test('regex errors that Python raises (not re.error) make the flag error', () => {
    const def = flag('k', { groups: [{ properties: [{ key: 'a', operator: 'regex', value: 'a{4294967296}' }] }] })
    expect(run(def, input('x', { personOverrides: { a: 'a' } }))).toEqual({ ok: false, key: 'k', error: 'evaluation_error' })
  })

  test('a lone surrogate in the identifier cannot be UTF-8 encoded by Python: evaluation error', () => {
    expect(run(flag('k', { groups: [{ rollout_percentage: 50 }] }), input('bad\ud800'))).toEqual({ ok: false, key: 'k', error: 'evaluation_error' })
    expect(run(flag('k', { groups: [{}] }), input('bad\ud800')).enabled).toBe(true) // no hash needed
  })
})

describe('storedDataNeeded', () => {
  const need = (defs: FlagDefinition[], over: Partial<EvalInput> = {}) => {
    const r = storedDataNeeded(defs.map(compileFlag), input('x', over))
    return { person: r.person, groupTypes: [...r.groupTypes].sort() }
  }
  test('nothing when every condition key is overridden', () => {
    expect(need([flag('a', { groups: [{ properties: [email('a')] }, {}] })], { personOverrides: { email: 'q' } })).toEqual({ person: false, groupTypes: [] })
  })
  test('the person when a person flag reads a key that is not overridden', () => {
    expect(need([flag('a', { groups: [{ properties: [email('a')] }] })])).toEqual({ person: true, groupTypes: [] })
  })
  test('an unknown cohort needs nothing (it is false); known cohorts: see cohorts.test.ts', () => {
    expect(need([flag('a', { groups: [{ properties: [{ key: 'id', type: 'cohort', value: 1 }] }] })])).toEqual({ person: false, groupTypes: [] })
  })
  test('group types by name, only for groups present in the request', () => {
    const g = (idx: number) => flag(`g${idx}`, { aggregation_group_type_index: idx, groups: [{ properties: [{ key: 'plan', type: 'group', value: 'x' }] }] })
    expect(need([g(0), g(1)], { groups: { organization: 'o' } })).toEqual({ person: false, groupTypes: ['organization'] })
    expect(need([g(0)], { groups: { organization: 'o' }, groupOverrides: { organization: { plan: 'x' } } })).toEqual({ person: false, groupTypes: [] })
    expect(need([g(0), g(1)])).toEqual({ person: false, groupTypes: [] })
  })
  test('inactive, deleted and broken flags need nothing', () => {
    const reads = { groups: [{ properties: [email('a')] }] }
    expect(need([flag('a', reads, { active: false }), flag('b', reads, { deleted: true }), flag('c', { groups: 7 })])).toEqual({ person: false, groupTypes: [] })
  })
  test('a super condition key that is not overridden needs the person', () => {
    expect(need([flag('a', { groups: [{}], super_groups: [{ properties: [{ key: 'is_enabled', value: true }] }] })])).toEqual({ person: true, groupTypes: [] })
    expect(need([flag('a', { groups: [{}], super_groups: [{ properties: [{ key: 'is_enabled', value: true }] }] })], { personOverrides: { is_enabled: true } })).toEqual({
      person: false,
      groupTypes: [],
    })
  })
  test('agrees with evaluation: loading what it asks for removes every needs_stored_data', () => {
    const defs = [
      flag('a', { groups: [{ properties: [email('a')] }] }),
      flag('b', { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'plan', value: 'x' }] }] }),
      flag('c', { groups: [{}], super_groups: [{ properties: [{ key: 'beta', value: true }] }] }),
    ]
    const flags = defs.map(compileFlag)
    const base = input('x', { groups: { organization: 'o' } })
    const n = storedDataNeeded(flags, base)
    const loaded = { ...base, storedPerson: n.person ? {} : undefined, storedGroups: new Map([...n.groupTypes].map((t) => [t, {}] as [string, Record<string, unknown>])) }
    expect(evaluateFlags(flags, loaded).every((o) => o.ok)).toBe(true)
  })
})
