import { describe, expect, test } from 'bun:test'
import { editableFilters } from './filters'

const person = (key: string, value: unknown, operator = 'exact') => ({ key, value, operator, type: 'person' })

describe('cohort filters the form can edit', () => {
  test('one AND group of person filters (what the form writes) is editable', () => {
    expect(editableFilters({ filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [person('plan', 'pro'), person('age', 30, 'gt')] }] } } })).toEqual([
      { key: 'plan', operator: 'exact', value: 'pro' },
      { key: 'age', operator: 'gt', value: '30' },
    ])
    expect(editableFilters({ filters: { properties: {} } })).toEqual([])
  })

  test('anything richer is kept as it is (null): OR of groups, nested cohorts, behaviour, negation, lists', () => {
    const or = { type: 'OR', values: [{ type: 'AND', values: [person('a', '1')] }, { type: 'AND', values: [person('b', '2')] }] }
    expect(editableFilters({ filters: { properties: or } })).toBeNull()
    const wrap = (item: unknown) => ({ filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [item] }] } } })
    expect(editableFilters(wrap({ key: 'id', value: 3, type: 'cohort' }))).toBeNull()
    expect(editableFilters(wrap({ key: '$pageview', type: 'behavioral', value: 'performed_event' }))).toBeNull()
    expect(editableFilters(wrap({ ...person('a', '1'), negation: true }))).toBeNull()
    expect(editableFilters(wrap(person('a', ['x', 'y'])))).toBeNull()
    expect(editableFilters(wrap({ type: 'OR', values: [person('a', '1')] }))).toBeNull()
  })
})
