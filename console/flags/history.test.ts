import { describe, expect, test } from 'bun:test'
import { changeLines, conditionText } from './history'

describe('a flag change in words', () => {
  test('a condition set: its rollout, its filters, its variant override', () => {
    expect(conditionText({ rollout_percentage: 50, properties: [{ key: 'plan', type: 'person', operator: 'exact', value: ['pro', 'team'] }] })).toBe(
      '50% of users where plan equals pro or team',
    )
    expect(conditionText({ rollout_percentage: null, properties: [{ key: 'id', type: 'cohort', value: 4 }, { key: 'beta', type: 'flag', operator: 'flag_evaluates_to', value: true }], variant: 'test' })).toBe(
      '100% of users where in cohort 4 and flag beta is true, variant test',
    )
    expect(conditionText({ rollout_percentage: 0, properties: [{ key: 'email', type: 'person', operator: 'is_set' }] })).toBe('0% of users where email is set')
  })

  test('release conditions: only the condition sets, variants and payloads that changed, each before → after', () => {
    const before = { groups: [{ properties: [], rollout_percentage: 20 }, { properties: [{ key: 'plan', type: 'person', value: 'pro' }], rollout_percentage: 100 }], payloads: { true: '{"a":1}' } }
    const after = {
      groups: [{ properties: [], rollout_percentage: 50 }, { properties: [{ key: 'plan', type: 'person', value: 'pro' }], rollout_percentage: 100 }, { properties: [], rollout_percentage: 5, variant: 'test' }],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 50 }] },
      payloads: { control: '{"a":1}' },
    }
    expect(changeLines({ field: 'filters', before, after })).toEqual([
      { label: 'Condition set 1', before: '20% of all users', after: '50% of all users' },
      { label: 'Condition set 3', before: null, after: '5% of all users, variant test' },
      { label: 'Variants', before: 'none (a boolean flag)', after: 'control 50%, test 50%' },
      { label: 'Payload', before: '{"a":1}', after: null },
      { label: 'Payload for control', before: null, after: '{"a":1}' },
    ])
  })

  test('other fields by name; a long value is cut; nothing changed in the filters reads as nothing', () => {
    expect(changeLines({ field: 'active', before: false, after: true })).toEqual([{ label: 'Enabled', before: 'false', after: 'true' }])
    const [long] = changeLines({ field: 'name', before: 'x'.repeat(1000), after: 'y' })
    expect(long.before!.length).toBeLessThanOrEqual(160)
    expect(changeLines({ field: 'filters', before: { groups: [] }, after: { groups: [] } })).toEqual([])
    expect(changeLines({ field: 'filters', before: null, after: 'garbage' })).toEqual([])
  })
})
