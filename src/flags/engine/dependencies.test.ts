// Flags that depend on flags: one test per rule (see docs/cohorts.md, "Flag dependencies").
import { describe, expect, test } from 'bun:test'
import { compileFlag, DependencyGraph, evaluateFlag, evaluateFlags, type EvalInput, type FlagDefinition, type FlagOutcome } from './index'

const NOW = new Date('2020-01-01T12:00:00Z')

const on = (id: number, key: string, groups: unknown[], extra: Partial<FlagDefinition> & { multivariate?: unknown } = {}): FlagDefinition => {
  const { multivariate, ...rest } = extra
  return { id, key, active: true, deleted: false, filters: { groups: groups as never, ...(multivariate ? { multivariate: multivariate as never } : {}) }, ensure_experience_continuity: false, version: 1, ...rest }
}
const depends = (id: number | string, value: unknown) => ({ key: String(id), type: 'flag', value, operator: 'flag_evaluates_to' })
const always = [{ properties: [], rollout_percentage: 100 }]
const never = [{ properties: [], rollout_percentage: 0 }]
const VARIANTS = { variants: [{ key: 'red', rollout_percentage: 100 }, { key: 'blue', rollout_percentage: 0 }] }

function input(over: Partial<EvalInput> = {}): EvalInput {
  return {
    distinctId: 'example_id',
    groups: {},
    groupTypeNames: new Map(),
    personOverrides: { distinct_id: 'example_id' },
    groupOverrides: {},
    storedPerson: undefined,
    storedGroups: undefined,
    now: NOW,
    ...over,
  }
}

/** Evaluate all flags (dependencies first); the value of each by key, or its error. */
function values(defs: FlagDefinition[], over: Partial<EvalInput> = {}): Record<string, boolean | string> {
  const out: Record<string, boolean | string> = {}
  for (const o of evaluateFlags(defs.map(compileFlag), input(over))) out[o.ok ? o.result.key : o.key] = o.ok ? (o.result.variant ?? o.result.enabled) : o.error
  return out
}

describe('the value a dependency filter expects', () => {
  test('true matches a true dependency and any variant', () => {
    expect(values([on(1, 'base', always), on(2, 'dependent', [{ properties: [depends(1, true)] }])]).dependent).toBe(true)
    expect(values([on(1, 'base', always, { multivariate: VARIANTS }), on(2, 'dependent', [{ properties: [depends(1, true)] }])]).dependent).toBe(true)
    expect(values([on(1, 'base', never), on(2, 'dependent', [{ properties: [depends(1, true)] }])]).dependent).toBe(false)
  })
  test('false matches only a false dependency', () => {
    expect(values([on(1, 'base', never), on(2, 'dependent', [{ properties: [depends(1, false)] }])]).dependent).toBe(true)
    expect(values([on(1, 'base', always), on(2, 'dependent', [{ properties: [depends(1, false)] }])]).dependent).toBe(false)
    expect(values([on(1, 'base', always, { multivariate: VARIANTS }), on(2, 'dependent', [{ properties: [depends(1, false)] }])]).dependent).toBe(false)
  })
  test('a string matches only that exact variant (case-sensitive), never a boolean value', () => {
    const base = on(1, 'base', always, { multivariate: VARIANTS })
    expect(values([base, on(2, 'd', [{ properties: [depends(1, 'red')] }])]).d).toBe(true)
    expect(values([base, on(2, 'd', [{ properties: [depends(1, 'blue')] }])]).d).toBe(false)
    expect(values([base, on(2, 'd', [{ properties: [depends(1, 'RED')] }])]).d).toBe(false)
    expect(values([on(1, 'base', always), on(2, 'd', [{ properties: [depends(1, 'true')] }])]).d).toBe(false)
  })
  test('numbers, null and lists never match', () => {
    for (const v of [1, 0, null, ['red']]) expect(values([on(1, 'base', always), on(2, 'd', [{ properties: [depends(1, v)] }])]).d).toBe(false)
  })
})

describe('evaluation order and missing dependencies', () => {
  test('dependencies are evaluated first, whatever the ids say; chains follow through', () => {
    // c (id 1) depends on b (id 2), which depends on a (id 3)
    const defs = [on(1, 'c', [{ properties: [depends(2, true)] }]), on(2, 'b', [{ properties: [depends(3, false)] }]), on(3, 'a', never)]
    expect(values(defs)).toEqual({ c: true, b: true, a: false })
    const flipped = [defs[0], defs[1], on(3, 'a', always)]
    expect(values(flipped)).toEqual({ c: false, b: false, a: true })
  })
  test('a dependency that is not an active flag of the project is missing: the filter is false', () => {
    const dependent = on(2, 'd', [{ properties: [depends(1, true)] }])
    expect(values([dependent]).d).toBe(false)
    expect(values([on(1, 'base', always, { active: false }), dependent]).d).toBe(false)
    expect(values([on(1, 'base', always, { deleted: true }), dependent]).d).toBe(false)
    // a key that is not an id (a flag key) names nothing
    expect(values([on(1, 'base', always), on(2, 'd', [{ properties: [depends('base', true)] }])]).d).toBe(false)
    // and with false expected, a missing dependency still fails closed
    expect(values([on(2, 'd', [{ properties: [depends(1, false)] }])]).d).toBe(false)
  })
  test('flags on a cycle, and those depending on them, error; the others are unaffected', () => {
    const defs = [
      on(1, 'x', [{ properties: [depends(2, true)] }]),
      on(2, 'y', [{ properties: [depends(1, true)] }]),
      on(3, 'behind', [{ properties: [depends(1, true)] }]),
      on(4, 'free', always),
      on(5, 'self', [{ properties: [depends(5, true)] }]),
    ]
    expect(values(defs)).toEqual({ x: 'evaluation_error', y: 'evaluation_error', behind: 'evaluation_error', free: true, self: 'evaluation_error' })
  })
  test('a dependency that needs stored data holds its dependent back; one that errors makes it error', () => {
    const base = on(1, 'base', [{ properties: [{ key: 'plan', type: 'person', value: 'pro' }] }])
    const dependent = on(2, 'd', [{ properties: [depends(1, true)] }])
    expect(values([base, dependent])).toEqual({ base: 'needs_stored_data', d: 'needs_stored_data' })
    expect(values([base, dependent], { storedPerson: { plan: 'pro' } })).toEqual({ base: true, d: true })
    const broken = on(1, 'base', [{ properties: [], rollout_percentage: 'fifty' }])
    expect(values([broken, dependent])).toEqual({ base: 'evaluation_error', d: 'evaluation_error' })
  })
  test('the dependent is a flag like any other: its own key and rollout decide, ANDed with its other properties', () => {
    // beta-feature.example_id hashes to 0.2093: in at 30 %, out at 20 %
    const base = on(1, 'base', always)
    expect(values([base, on(2, 'beta-feature', [{ properties: [depends(1, true)], rollout_percentage: 30 }])])['beta-feature']).toBe(true)
    expect(values([base, on(2, 'beta-feature', [{ properties: [depends(1, true)], rollout_percentage: 20 }])])['beta-feature']).toBe(false)
    const both = on(2, 'd', [{ properties: [depends(1, true), { key: 'plan', type: 'person', value: 'pro' }] }])
    expect(values([base, both], { personOverrides: { plan: 'pro' } }).d).toBe(true)
    expect(values([base, both], { personOverrides: { plan: 'free' } }).d).toBe(false)
  })
  test('evaluateFlag alone reads the outcomes handed in', () => {
    const dependent = compileFlag(on(2, 'd', [{ properties: [depends(1, 'red')] }]))
    const outcome = (variant: string | null): FlagOutcome => ({ ok: true, result: { key: 'base', enabled: true, variant, reason: 'condition_match', conditionIndex: 0, payload: undefined } })
    const run = (o: FlagOutcome) => evaluateFlag(dependent, input({ flagOutcomes: new Map([[1, o]]) }))
    expect(run(outcome('red'))).toMatchObject({ ok: true, result: { enabled: true } })
    expect(run(outcome('blue'))).toMatchObject({ ok: true, result: { enabled: false } })
  })
})

describe('DependencyGraph.plan', () => {
  const flags = [
    on(1, 'c', [{ properties: [depends(2, true)] }]),
    on(2, 'b', [{ properties: [depends(3, true)] }]),
    on(3, 'a', always),
    on(4, 'alone', always),
  ].map(compileFlag)
  const graph = new DependencyGraph(flags)
  test('asking for some flags pulls in what they depend on, after them, unanswered', () => {
    const plan = graph.plan([flags[0]])
    expect(plan.asked).toBe(1)
    expect(plan.flags.map((f) => f.key)).toEqual(['c', 'b', 'a'])
    expect(plan.order.map((i) => plan.flags[i].key)).toEqual(['a', 'b', 'c'])
  })
  test('all flags: dependencies first, no cycles', () => {
    const plan = graph.plan(flags)
    expect(plan.order.map((i) => plan.flags[i].key)).toEqual(['a', 'alone', 'b', 'c'])
    expect(plan.cyclic.size).toBe(0)
  })
  test('without any dependency the flags are evaluated as given', () => {
    const plain = [on(1, 'x', always), on(2, 'y', always)].map(compileFlag)
    const plan = new DependencyGraph(plain).plan(plain)
    expect(plan.flags).toBe(plain)
    expect(plan.order).toEqual([0, 1])
  })
})
