import { describe, expect, test } from 'bun:test'
import { compileFlag, evaluateFlag, type EvalInput, type FlagDefinition, type FlagOutcome } from './index'
import { flagHash, holdoutHash } from './hash'
import { HashMemo, rememberedHash } from './hash-memo'

const NOW = new Date('2026-11-28T12:00:00Z')

const definitions: FlagDefinition[] = [
  { key: 'rollout', filters: { groups: [{ properties: [], rollout_percentage: 37 }] } },
  { key: 'two-conditions', filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }], rollout_percentage: 80 }, { properties: [], rollout_percentage: 20 }] } },
  {
    key: 'multivariate',
    filters: {
      groups: [{ properties: [], rollout_percentage: 90 }],
      multivariate: { variants: [{ key: 'control', rollout_percentage: 34 }, { key: 'test', rollout_percentage: 33 }, { key: 'other', rollout_percentage: 33 }] },
    },
  },
  {
    key: 'holdout',
    filters: {
      holdout_groups: [{ properties: [], rollout_percentage: 30, variant: 'holdout-1' }],
      groups: [{ properties: [], rollout_percentage: 60 }],
      multivariate: { variants: [{ key: 'a', rollout_percentage: 50 }, { key: 'b', rollout_percentage: 50 }] },
    },
  },
  { key: 'company', filters: { aggregation_group_type_index: 0, groups: [{ properties: [], rollout_percentage: 50 }] } },
].map((d, i) => ({ id: i + 1, active: true, deleted: false, ensure_experience_continuity: false, version: 1, ...d }) as FlagDefinition)
const flags = definitions.map((d) => compileFlag(d))

function input(distinctId: string, hashMemo?: HashMemo): EvalInput {
  return {
    distinctId,
    groups: { company: `company-${distinctId.length % 7}` },
    groupTypeNames: new Map([[0, 'company']]),
    personOverrides: { distinct_id: distinctId, plan: distinctId.endsWith('1') ? 'pro' : 'free' },
    groupOverrides: {},
    storedPerson: undefined,
    storedGroups: undefined,
    now: NOW,
    hashMemo,
  }
}

const outcomes = (distinctId: string, memo?: HashMemo): FlagOutcome[] => flags.map((f) => evaluateFlag(f, input(distinctId, memo)))

describe('HashMemo', () => {
  test('evaluation with the memo answers exactly as without it, first from SHA-1 and then from memory', () => {
    const memo = new HashMemo(1024 * 1024)
    const ids = Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? `user-${i}` : i % 3 === 1 ? `ünïcode-${i}-😀` : String(i)))
    for (let pass = 0; pass < 2; pass++) {
      for (const id of ids) expect(outcomes(id, memo)).toEqual(outcomes(id))
    }
    expect(memo.size.identifiers).toBeGreaterThan(0)
  })

  test('flags placed in tables (as the flag cache places them) answer as without a memo, across tables and budgets', () => {
    // two projects' tables holding the same flags in other orders, and a table rebuilt (a reload): slots differ, hashes not
    const place = (order: number[]) => {
      const table = { size: order.length }
      const placed = order.map((i, slot) => ({ ...compileFlag(definitions[i]), memoTable: table, memoSlot: slot }))
      return placed
    }
    const tables = [place([0, 1, 2, 3, 4]), place([4, 3, 2, 1, 0]), place([2, 0, 4])]
    for (const budget of [1024 * 1024, 3000, 0]) {
      const memo = new HashMemo(budget)
      for (let pass = 0; pass < 3; pass++) {
        for (let id = 0; id < 60; id++) {
          const table = tables[(id + pass) % tables.length]
          const plain = table.map((f) => evaluateFlag({ ...f, memoTable: null, memoSlot: -1 }, input(`u-${id}`)))
          const one = input(`u-${id}`, memo)
          expect(table.map((f) => evaluateFlag(f, one))).toEqual(plain)
          expect(memo.size.bytes).toBeLessThanOrEqual(budget)
        }
      }
    }
  })

  test('a remembered hash is the hash of the key and identifier, whichever flag object or project asked', () => {
    const memo = new HashMemo(1024 * 1024)
    memo.set('rollout', 'rollout.', 'u1', flagHash('rollout', 'u1'))
    memo.set('variant', 'rollout.', 'u1', flagHash('rollout', 'u1', 'variant'))
    memo.set('holdout', '', 'u1', holdoutHash('u1'))
    expect(memo.get('rollout', 'rollout.', 'u1')).toBe(flagHash('rollout', 'u1'))
    expect(memo.get('variant', 'rollout.', 'u1')).toBe(flagHash('rollout', 'u1', 'variant'))
    expect(memo.get('holdout', 'anything', 'u1')).toBe(holdoutHash('u1'))
    expect(memo.get('rollout', 'other.', 'u1')).toBeUndefined()
    expect(memo.get('rollout', 'rollout.', 'u2')).toBeUndefined()
    // a recompiled flag (a new version) with the same key finds the same hash
    const recompiled = compileFlag({ ...definitions[0], version: 2 })
    const before = evaluateFlag(flags[0], input('u1', memo))
    expect(evaluateFlag(recompiled, input('u1', memo))).toEqual(before)
  })

  test('its memory stays within the budget, whatever identifiers arrive, first in first out', () => {
    const budget = 64 * 1024
    const memo = new HashMemo(budget)
    for (let i = 0; i < 20_000; i++) {
      const id = `attacker-${i}-${'x'.repeat(i % 500)}`
      memo.set('rollout', 'a.', id, 0.5)
      memo.set('variant', 'a.', id, 0.25)
      expect(memo.size.bytes).toBeLessThanOrEqual(budget)
    }
    expect(memo.size.identifiers).toBeGreaterThan(10)
    expect(memo.get('rollout', 'a.', 'attacker-0-')).toBeUndefined()
    expect(memo.get('rollout', 'a.', 'attacker-19999-' + 'x'.repeat(19_999 % 500))).toBe(0.5)
  })

  test('one identifier with more hashes than the budget holds evicts the others, then itself, and evaluation goes on', () => {
    const memo = new HashMemo(4096)
    memo.set('rollout', 'first.', 'someone-else', 0.1)
    for (let i = 0; i < 500; i++) {
      memo.set('rollout', `flag-${i}.`, 'busy', i / 1000)
      expect(memo.size.bytes).toBeLessThanOrEqual(4096)
    }
    expect(memo.get('rollout', 'first.', 'someone-else')).toBeUndefined()
    expect(outcomes('busy', memo)).toEqual(outcomes('busy'))
  })

  test('an entry taken for a request and evicted meanwhile keeps its answers and adds nothing to the count', () => {
    const memo = new HashMemo(3000)
    const held = memo.entry('held')!
    memo.remember(held, 'rollout', 'a.', 0.5)
    for (let i = 0; i < 5; i++) memo.set('rollout', 'a.', `other-${i}`, 0.1)
    expect(memo.get('rollout', 'a.', 'held')).toBeUndefined()
    expect(held.live).toBe(false)
    expect(rememberedHash(held, 'rollout', 'a.')).toBe(0.5)
    const before = memo.size.bytes
    memo.remember(held, 'rollout', 'b.', 0.25)
    expect(memo.size.bytes).toBe(before)
    expect(memo.entry('held')).not.toBe(held)
  })

  test('an identifier larger than the budget, and a budget of 0, remember nothing', () => {
    const small = new HashMemo(300)
    small.set('rollout', 'a.', 'x'.repeat(1000), 0.5)
    expect(small.size).toEqual({ bytes: 0, identifiers: 0 })
    const none = new HashMemo(0)
    none.set('rollout', 'a.', 'u', 0.5)
    expect(none.get('rollout', 'a.', 'u')).toBeUndefined()
    expect(outcomes('u', none)).toEqual(outcomes('u'))
  })
})
