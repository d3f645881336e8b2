import { describe, expect, test } from 'bun:test'
import { ApiError } from '../http/errors'
import { assertMemberChange, checkedLevel } from './rules'

const refusal = (fn: () => void) => {
  try {
    fn()
  } catch (error) {
    return error instanceof ApiError ? `${error.status} ${error.code}` : String(error)
  }
  return 'allowed'
}

describe('member rules', () => {
  test('levels are PostHog’s three', () => {
    expect([1, 8, 15].map(checkedLevel)).toEqual([1, 8, 15])
    for (const bad of [0, 2, 16, '15', null, 8.5]) expect(refusal(() => checkedLevel(bad))).toBe('400 invalid_choice')
  })

  test('only an owner re-levels or removes others; anyone may leave', () => {
    const base = { actorId: 1, targetId: 2, targetLevel: 1, owners: 1 }
    expect(refusal(() => assertMemberChange({ ...base, actorLevel: 15, newLevel: 8 }))).toBe('allowed')
    expect(refusal(() => assertMemberChange({ ...base, actorLevel: 8, newLevel: 8 }))).toBe('403 permission_denied')
    expect(refusal(() => assertMemberChange({ ...base, actorLevel: 8, newLevel: null }))).toBe('403 permission_denied')
    expect(refusal(() => assertMemberChange({ ...base, actorLevel: 1, targetId: 1, newLevel: null }))).toBe('allowed')
    expect(refusal(() => assertMemberChange({ ...base, actorLevel: 1, targetId: 1, newLevel: 15 }))).toBe('403 permission_denied')
  })

  test('the last owner can neither step down nor leave; with a second owner they can', () => {
    const self = { actorId: 1, actorLevel: 15, targetId: 1, targetLevel: 15 }
    expect(refusal(() => assertMemberChange({ ...self, owners: 1, newLevel: 8 }))).toBe('400 last_owner')
    expect(refusal(() => assertMemberChange({ ...self, owners: 1, newLevel: null }))).toBe('400 last_owner')
    expect(refusal(() => assertMemberChange({ ...self, owners: 2, newLevel: null }))).toBe('allowed')
    expect(refusal(() => assertMemberChange({ ...self, targetId: 2, owners: 2, newLevel: 1 }))).toBe('allowed')
  })
})
