import { describe, expect, test } from 'bun:test'
import { allocateGroupTypes, groupTypesOf, groupUpdates } from './groups'
import { MAX_PERSON_PROPERTIES_SIZE, type PersonEvent } from './identity'

describe('group types', () => {
  test('take the lowest free index in order of first sight, at most five', () => {
    expect(allocateGroupTypes(new Map(), ['company', 'project', 'company', 'team'])).toEqual([
      ['company', 0],
      ['project', 1],
      ['team', 2],
    ])
    const existing = new Map([
      ['a', 0],
      ['c', 2],
    ])
    expect(allocateGroupTypes(existing, ['b', 'd', 'e', 'f', 'g'])).toEqual([
      ['b', 1],
      ['d', 3],
      ['e', 4],
    ])
  })

  test('a blocked name takes no index, and leaves it to the next name', () => {
    expect(allocateGroupTypes(new Map([['a', 0]]), ['junk', 'company', 'junk'], new Set(['junk']))).toEqual([['company', 1]])
  })

  test('come from $groupidentify and from $groups on any event', () => {
    expect(groupTypesOf({ event: '$groupidentify', distinctId: 'x', timestamp: 0, properties: { $group_type: 'company', $groups: { team: 't1' } } })).toEqual(['company', 'team'])
    expect(groupTypesOf({ event: 'clicked', distinctId: 'x', timestamp: 0, properties: { $groups: { project: 'p' } } })).toEqual(['project'])
  })
})

describe('group properties', () => {
  test('$group_set merges in event order, per group', () => {
    const e = (key: unknown, set: Record<string, unknown>) => ({
      event: '$groupidentify',
      distinctId: 'setup',
      timestamp: 0,
      properties: { $group_type: 'company', $group_key: key, $group_set: set },
    })
    expect(groupUpdates([e('acme', { plan: 'free', seats: 3 }), e(42, { name: 'Answer' }), e('acme', { plan: 'pro' })])).toEqual([
      { type: 'company', key: 'acme', properties: { plan: 'pro', seats: 3 } },
      { type: 'company', key: '42', properties: { name: 'Answer' } },
    ])
  })
})

describe('group properties size limit', () => {
  test('a $group_set over the limit is dropped and counted; the group keeps the others', () => {
    const gi = (set: Record<string, unknown>): PersonEvent => ({ event: '$groupidentify', distinctId: 'd', timestamp: 1, properties: { $group_type: 'company', $group_key: 'acme', $group_set: set } })
    const dropped = { tooLarge: 0 }
    const updates = groupUpdates([gi({ plan: 'pro' }), gi({ blob: 'x'.repeat(MAX_PERSON_PROPERTIES_SIZE) })], dropped)
    expect(updates).toEqual([{ type: 'company', key: 'acme', properties: { plan: 'pro' } }])
    expect(dropped.tooLarge).toBe(1)
  })
})
