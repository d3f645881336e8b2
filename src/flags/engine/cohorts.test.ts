// Cohorts in flag conditions: one test per rule of PostHog's semantics (see docs/cohorts.md).
import { describe, expect, test } from 'bun:test'
import { CohortSet, type CohortDefinition, compileFlag, evaluateFlag, type EvalInput, type FlagDefinition, storedDataNeeded } from './index'

const NOW = new Date('2020-01-01T12:00:00Z')

const person = (key: string, value: unknown, operator = 'exact', negation?: boolean) => ({ key, type: 'person', value, operator, ...(negation === undefined ? {} : { negation }) })
const nested = (id: number | string, negation?: boolean) => ({ key: 'id', type: 'cohort', value: id, ...(negation === undefined ? {} : { negation }) })
/** PostHog's two-level shape: an outer group of inner groups of filters */
const tree = (outer: 'AND' | 'OR', ...inner: ['AND' | 'OR', unknown[]][]) => ({ properties: { type: outer, values: inner.map(([type, values]) => ({ type, values })) } })
const dynamic = (id: number, filters: unknown): CohortDefinition => ({ id, is_static: false, filters })
const staticCohort = (id: number): CohortDefinition => ({ id, is_static: true, filters: null })

const cohortProp = (id: unknown, operator?: string) => ({ key: 'id', type: 'cohort', value: id, ...(operator ? { operator } : {}) })

function flagOn(properties: unknown[], extra: Record<string, unknown> = {}, key = 'beta-feature'): FlagDefinition {
  return { id: 1, key, active: true, deleted: false, filters: { groups: [{ properties: properties as never, rollout_percentage: 100 }], ...extra }, ensure_experience_continuity: false, version: 1 }
}

function input(cohorts: CohortDefinition[], over: Partial<EvalInput> = {}): EvalInput {
  return {
    distinctId: 'example_id',
    groups: {},
    groupTypeNames: new Map([[0, 'organization']]),
    personOverrides: { distinct_id: 'example_id' },
    groupOverrides: {},
    storedPerson: undefined,
    storedGroups: undefined,
    now: NOW,
    cohorts: new CohortSet(cohorts),
    ...over,
  }
}

/** enabled, or the error when the flag has no value */
function value(def: FlagDefinition, inp: EvalInput): boolean | string {
  const out = evaluateFlag(compileFlag(def), inp)
  return out.ok ? out.result.enabled : out.error
}

const PLAN_PRO = dynamic(1, tree('OR', ['AND', [person('plan', 'pro')]]))

describe('static cohorts', () => {
  test('a static cohort is membership of the person: the ids handed in with the stored person', () => {
    const cohorts = [staticCohort(7)]
    expect(value(flagOn([cohortProp(7)]), input(cohorts, { storedPerson: {}, staticCohorts: new Set([7]) }))).toBe(true)
    expect(value(flagOn([cohortProp(7)]), input(cohorts, { storedPerson: {}, staticCohorts: new Set([8]) }))).toBe(false)
  })
  test('no person row: not a member; overrides cannot make anyone a member', () => {
    const cohorts = [staticCohort(7)]
    expect(value(flagOn([cohortProp(7)]), input(cohorts, { storedPerson: null, personOverrides: { distinct_id: 'example_id', id: 7, cohort: 7 } }))).toBe(false)
  })
  test('memberships are stored data: asked for, and needed before an answer', () => {
    const cohorts = [staticCohort(7)]
    expect(value(flagOn([cohortProp(7)]), input(cohorts))).toBe('needs_stored_data')
    expect(storedDataNeeded([compileFlag(flagOn([cohortProp(7)]))], input(cohorts))).toEqual({ person: true, groupTypes: new Set(), memberships: true })
  })
})

describe('dynamic cohorts', () => {
  test('filters are evaluated on the stored person properties', () => {
    expect(value(flagOn([cohortProp(1)]), input([PLAN_PRO], { storedPerson: { plan: 'pro' } }))).toBe(true)
    expect(value(flagOn([cohortProp(1)]), input([PLAN_PRO], { storedPerson: { plan: 'free' } }))).toBe(false)
  })
  test('request overrides win over stored properties, key by key', () => {
    const both = dynamic(1, tree('AND', ['AND', [person('plan', 'pro'), person('country', 'DE')]]))
    expect(value(flagOn([cohortProp(1)]), input([both], { storedPerson: { plan: 'free', country: 'DE' }, personOverrides: { plan: 'pro' } }))).toBe(true)
    expect(value(flagOn([cohortProp(1)]), input([both], { storedPerson: { plan: 'pro', country: 'DE' }, personOverrides: { country: 'FR' } }))).toBe(false)
  })
  test('overrides alone can satisfy a cohort: a person never ingested, or no stored data loaded at all', () => {
    expect(value(flagOn([cohortProp(1)]), input([PLAN_PRO], { storedPerson: null, personOverrides: { plan: 'pro' } }))).toBe(true)
    expect(value(flagOn([cohortProp(1)]), input([PLAN_PRO], { personOverrides: { plan: 'pro' } }))).toBe(true)
    expect(storedDataNeeded([compileFlag(flagOn([cohortProp(1)]))], input([PLAN_PRO], { personOverrides: { plan: 'pro' } })).person).toBe(false)
  })
  test('a key the overrides lack needs the stored person', () => {
    expect(value(flagOn([cohortProp(1)]), input([PLAN_PRO]))).toBe('needs_stored_data')
    expect(storedDataNeeded([compileFlag(flagOn([cohortProp(1)]))], input([PLAN_PRO]))).toEqual({ person: true, groupTypes: new Set(), memberships: false })
  })
  test('a missing property follows the flag rules: positive operators fail, negative ones pass', () => {
    const notFree = dynamic(1, tree('AND', ['AND', [person('plan', 'free', 'is_not')]]))
    expect(value(flagOn([cohortProp(1)]), input([notFree], { storedPerson: {} }))).toBe(true)
    expect(value(flagOn([cohortProp(1)]), input([PLAN_PRO], { storedPerson: {} }))).toBe(false)
  })
  test('AND and OR groups, outer and inner', () => {
    const c = dynamic(1, tree('OR', ['AND', [person('plan', 'pro'), person('seats', '10', 'gt')]], ['AND', [person('email', '@acme.com', 'icontains')]]))
    const run = (props: Record<string, unknown>) => value(flagOn([cohortProp(1)]), input([c], { storedPerson: props }))
    expect(run({ plan: 'pro', seats: 20 })).toBe(true)
    expect(run({ plan: 'pro', seats: 5 })).toBe(false)
    expect(run({ email: 'ada@ACME.com' })).toBe(true)
    const and = dynamic(2, tree('AND', ['OR', [person('plan', 'pro'), person('plan', 'team')]], ['OR', [person('country', 'DE')]]))
    expect(value(flagOn([cohortProp(2)]), input([and], { storedPerson: { plan: 'team', country: 'DE' } }))).toBe(true)
    expect(value(flagOn([cohortProp(2)]), input([and], { storedPerson: { plan: 'team', country: 'FR' } }))).toBe(false)
  })
  test('deeper trees than two levels are evaluated too', () => {
    const deep = dynamic(1, { properties: { type: 'AND', values: [{ type: 'OR', values: [{ type: 'AND', values: [person('a', 1), person('b', 2)] }, person('c', 3)] }] } })
    expect(value(flagOn([cohortProp(1)]), input([deep], { storedPerson: { a: 1, b: 2 } }))).toBe(true)
    expect(value(flagOn([cohortProp(1)]), input([deep], { storedPerson: { a: 1 } }))).toBe(false)
    expect(value(flagOn([cohortProp(1)]), input([deep], { storedPerson: { c: 3 } }))).toBe(true)
  })
  test('negation inverts a filter, in AND groups and in OR groups', () => {
    const and = dynamic(1, tree('AND', ['AND', [person('plan', 'pro'), person('country', 'DE', 'exact', true)]]))
    expect(value(flagOn([cohortProp(1)]), input([and], { storedPerson: { plan: 'pro', country: 'FR' } }))).toBe(true)
    expect(value(flagOn([cohortProp(1)]), input([and], { storedPerson: { plan: 'pro', country: 'DE' } }))).toBe(false)
    const or = dynamic(2, tree('OR', ['OR', [person('plan', 'pro'), person('country', 'DE', 'exact', true)]]))
    expect(value(flagOn([cohortProp(2)]), input([or], { storedPerson: { plan: 'free', country: 'FR' } }))).toBe(true)
    expect(value(flagOn([cohortProp(2)]), input([or], { storedPerson: { plan: 'free', country: 'DE' } }))).toBe(false)
  })
  test('an empty cohort matches everyone', () => {
    for (const filters of [{ properties: {} }, { properties: { type: 'AND', values: [] } }, {}]) {
      expect(value(flagOn([cohortProp(1)]), input([dynamic(1, filters)], { storedPerson: {} }))).toBe(true)
    }
  })
  test('a cohort whose filters cannot be read matches nobody', () => {
    expect(value(flagOn([cohortProp(1)]), input([dynamic(1, { properties: { type: 'XOR', values: [person('a', 1)] } })], { storedPerson: { a: 1 } }))).toBe(false)
    expect(value(flagOn([cohortProp(1)]), input([dynamic(1, { properties: 'plan = pro' })], { storedPerson: {} }))).toBe(false)
  })
  test('a behavioural filter cannot be evaluated: the flag errors', () => {
    const behavioural = dynamic(1, tree('AND', ['AND', [{ key: '$pageview', type: 'behavioral', value: 'performed_event', event_type: 'events' }]]))
    expect(value(flagOn([cohortProp(1)]), input([behavioural], { storedPerson: {} }))).toBe('evaluation_error')
  })
})

describe('nested cohorts', () => {
  test('a cohort filter inside a cohort is membership of that cohort, evaluated first', () => {
    const outer = dynamic(2, tree('AND', ['AND', [nested(1), person('country', 'DE')]]))
    expect(value(flagOn([cohortProp(2)]), input([PLAN_PRO, outer], { storedPerson: { plan: 'pro', country: 'DE' } }))).toBe(true)
    expect(value(flagOn([cohortProp(2)]), input([PLAN_PRO, outer], { storedPerson: { plan: 'free', country: 'DE' } }))).toBe(false)
  })
  test('a nested static cohort makes memberships needed', () => {
    const outer = dynamic(2, tree('OR', ['AND', [nested(7)]]))
    const cohorts = [staticCohort(7), outer]
    expect(storedDataNeeded([compileFlag(flagOn([cohortProp(2)]))], input(cohorts, { personOverrides: {} })).memberships).toBe(true)
    expect(value(flagOn([cohortProp(2)]), input(cohorts, { storedPerson: {}, staticCohorts: new Set([7]) }))).toBe(true)
    expect(value(flagOn([cohortProp(2)]), input(cohorts, { storedPerson: {}, staticCohorts: new Set() }))).toBe(false)
  })
  test('a negated nested cohort', () => {
    const outer = dynamic(2, tree('AND', ['AND', [nested(1, true)]]))
    expect(value(flagOn([cohortProp(2)]), input([PLAN_PRO, outer], { storedPerson: { plan: 'free' } }))).toBe(true)
    expect(value(flagOn([cohortProp(2)]), input([PLAN_PRO, outer], { storedPerson: { plan: 'pro' } }))).toBe(false)
  })
  test('keys read by nested cohorts count: overrides must cover them to skip the stored person', () => {
    const outer = dynamic(2, tree('AND', ['AND', [nested(1), person('country', 'DE')]]))
    const flags = [compileFlag(flagOn([cohortProp(2)]))]
    expect(storedDataNeeded(flags, input([PLAN_PRO, outer], { personOverrides: { country: 'DE' } })).person).toBe(true)
    expect(storedDataNeeded(flags, input([PLAN_PRO, outer], { personOverrides: { country: 'DE', plan: 'pro' } })).person).toBe(false)
  })
  test('a loop that got stored anyway does not hang: the cohort that closes it is false there', () => {
    const a = dynamic(1, tree('OR', ['AND', [nested(2)]], ['AND', [person('plan', 'pro')]]))
    const b = dynamic(2, tree('AND', ['AND', [nested(1)]]))
    expect(value(flagOn([cohortProp(1)]), input([a, b], { storedPerson: { plan: 'pro' } }))).toBe(true)
    expect(value(flagOn([cohortProp(2)]), input([a, b], { storedPerson: { plan: 'free' } }))).toBe(false)
  })
  test('an unknown nested cohort is not a membership (so its negation holds)', () => {
    expect(value(flagOn([cohortProp(2)]), input([dynamic(2, tree('AND', ['AND', [nested(99)]]))], { storedPerson: {} }))).toBe(false)
    expect(value(flagOn([cohortProp(2)]), input([dynamic(2, tree('AND', ['AND', [nested(99, true)]]))], { storedPerson: {} }))).toBe(true)
  })
})

describe('the cohort filter of a flag condition', () => {
  test('operator not_in negates membership; no operator means in', () => {
    const inp = input([PLAN_PRO], { storedPerson: { plan: 'pro' } })
    expect(value(flagOn([cohortProp(1)]), inp)).toBe(true)
    expect(value(flagOn([cohortProp(1, 'in')]), inp)).toBe(true)
    expect(value(flagOn([cohortProp(1, 'not_in')]), inp)).toBe(false)
    expect(value(flagOn([cohortProp(1, 'not_in')]), input([PLAN_PRO], { storedPerson: { plan: 'free' } }))).toBe(true)
  })
  test('any other operator never matches', () => {
    expect(value(flagOn([cohortProp(1, 'exact')]), input([PLAN_PRO], { storedPerson: { plan: 'pro' } }))).toBe(false)
  })
  test('an unknown or deleted cohort (deleted ones are not handed in) is false, with in and not_in alike', () => {
    for (const operator of [undefined, 'in', 'not_in']) {
      expect(value(flagOn([cohortProp(42, operator)]), input([PLAN_PRO], { storedPerson: {} }))).toBe(false)
    }
    expect(value(flagOn([cohortProp('abc')]), input([PLAN_PRO], { storedPerson: { plan: 'pro' } }))).toBe(false)
  })
  test('the cohort id may be a number or a numeric string', () => {
    expect(value(flagOn([cohortProp('1')]), input([PLAN_PRO], { storedPerson: { plan: 'pro' } }))).toBe(true)
  })
  test('the cohort is ANDed with the other properties of its condition', () => {
    const def = flagOn([person('email', '@acme.com', 'icontains'), cohortProp(1)])
    expect(value(def, input([PLAN_PRO], { storedPerson: { plan: 'pro', email: 'a@acme.com' } }))).toBe(true)
    expect(value(def, input([PLAN_PRO], { storedPerson: { plan: 'pro', email: 'a@other.org' } }))).toBe(false)
    expect(value(def, input([PLAN_PRO], { storedPerson: { plan: 'free', email: 'a@acme.com' } }))).toBe(false)
  })
  test('rollout and variants hash exactly as without cohorts: a member outside the rollout is out_of_rollout_bound', () => {
    // beta-feature hashes: example_id 0.2093, another_id 0.9657
    const def: FlagDefinition = { ...flagOn([]), filters: { groups: [{ properties: [cohortProp(1)], rollout_percentage: 30 }] } }
    const member = { storedPerson: { plan: 'pro' } }
    const inRollout = evaluateFlag(compileFlag(def), input([PLAN_PRO], member))
    expect(inRollout.ok && inRollout.result).toMatchObject({ enabled: true, reason: 'condition_match', conditionIndex: 0 })
    const outside = evaluateFlag(compileFlag(def), input([PLAN_PRO], { ...member, distinctId: 'another_id' }))
    expect(outside.ok && outside.result).toMatchObject({ enabled: false, reason: 'out_of_rollout_bound', conditionIndex: 0 })
    const nonMember = evaluateFlag(compileFlag(def), input([PLAN_PRO], { storedPerson: { plan: 'free' } }))
    expect(nonMember.ok && nonMember.result).toMatchObject({ enabled: false, reason: 'no_condition_match' })
    // multivariate-flag.example_idvariant 0.4100: the second of 50/25/25
    const multi: FlagDefinition = {
      ...flagOn([cohortProp(1)], {}, 'multivariate-flag'),
      filters: {
        groups: [{ properties: [cohortProp(1)], rollout_percentage: 100 }],
        multivariate: { variants: [{ key: 'first', rollout_percentage: 25 }, { key: 'second', rollout_percentage: 50 }, { key: 'third', rollout_percentage: 25 }] },
      },
    }
    const v = evaluateFlag(compileFlag(multi), input([PLAN_PRO], member))
    expect(v.ok && v.result.variant).toBe('second')
  })
  test('group flags never match a cohort (cohorts are of persons)', () => {
    const def: FlagDefinition = { ...flagOn([]), filters: { aggregation_group_type_index: 0, groups: [{ properties: [cohortProp(1)] }] } }
    const inp = input([PLAN_PRO], { groups: { organization: 'acme' }, storedPerson: { plan: 'pro' }, storedGroups: new Map([['organization', { plan: 'pro' }]]) })
    expect(value(def, inp)).toBe(false)
  })
})
