// The project's budget counts each flag as local evaluation sends it: filters, key, name and the fixed fields.
import { describe, expect, test } from 'bun:test'
import { buildEntry } from './cache'
import { localEvaluationOf } from './local-evaluation'
import { checkProjectBudget, FLAG_FIXED_BYTES, flagBytes, measure, PROJECT_LIMITS, type FlagFootprint, type ProjectLimit } from './project-budget'
import type { CachedFlagRow } from './repository'

const row = (id: number, key: string, name: string): CachedFlagRow => ({
  id,
  team_id: 2_147_483_647,
  key,
  name,
  filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
  rollout_percentage: null,
  active: false,
  deleted: false,
  ensure_experience_continuity: false,
  version: 2_147_483_647,
})
const footprint = (r: CachedFlagRow): FlagFootprint => ({ id: r.id, key: r.key, bytes: flagBytes(r), dependencies: [] })

describe('what a flag costs the project', () => {
  test('the footprint bounds the local_evaluation answer, long escaped names and long keys included', () => {
    // a name of control characters is six bytes a character as JSON: the attack that made 34 MB answers
    const rows = Array.from({ length: 200 }, (_, i) => row(2_147_483_000 + i, `k${i}-`.padEnd(400, 'x'), '\u0001'.repeat(4000)))
    const answer = localEvaluationOf(buildEntry(1, { version: 1, flags: rows, groupTypes: [], cohorts: [] }), false).body
    const { bytes, keyBytes } = measure(rows.map(footprint), 0)
    console.log(`200 flags: local_evaluation ${answer.length} bytes, footprint ${bytes}, keys ${keyBytes}`)
    expect(answer.length).toBeLessThanOrEqual(bytes)
    expect(bytes).toBeGreaterThan(200 * 24_000) // the names count, as sent
    expect(keyBytes).toBe(200 * 402)
  })

  test('FLAG_FIXED_BYTES covers every field a flag carries besides its filters, key and name', () => {
    const empty = row(2_147_483_647, '', '')
    const answer = localEvaluationOf(buildEntry(1, { version: 1, flags: [empty, { ...empty, id: 2_147_483_646 }], groupTypes: [], cohorts: [] }), false).body
    const perFlag = (answer.length - JSON.stringify({ flags: [], group_type_mapping: {}, cohorts: {} }).length) / 2
    expect(perFlag).toBeLessThanOrEqual(flagBytes(empty))
    expect(FLAG_FIXED_BYTES).toBeLessThan(perFlag + 40) // and not far above
  })

  test('keys past PROJECT_LIMITS.keysBytes are refused, counted; a write that shrinks them is accepted', () => {
    const keyOf = (i: number) => `k${i}-`.padEnd(400, 'x')
    const fitting = Math.floor(PROJECT_LIMITS.keysBytes / 402) + 1 // one past the limit already (stored before it)
    const stored = Array.from({ length: fitting }, (_, i) => footprint(row(i + 1, keyOf(i), '')))
    const before = measure(stored, 0)
    const refused: ProjectLimit[] = []
    const one = footprint(row(fitting + 1, keyOf(fitting), ''))
    expect(() => checkProjectBudget(before, measure([...stored, one], 0), (limit) => refused.push(limit))).toThrow(/flag keys may take at most/)
    expect(refused).toEqual(['keys'])
    // renaming one to a shorter key shrinks the total: accepted, though still over
    const renamed = [...stored.slice(1), { ...stored[0]!, key: 'short' }]
    expect(() => checkProjectBudget(before, measure(renamed, 0))).not.toThrow()
  })

  test('names count in the footprint: long ones are refused past PROJECT_LIMITS.footprintBytes', () => {
    const stored: FlagFootprint[] = []
    const refused: ProjectLimit[] = []
    let accepted = 0
    for (let i = 0; i < 1500; i++) {
      const next = footprint(row(i + 1, `f${i}`, '\u0001'.repeat(4000)))
      try {
        checkProjectBudget(measure(stored, 0), measure([...stored, next], 0), (limit) => refused.push(limit))
      } catch {
        break
      }
      stored.push(next)
      accepted++
    }
    expect(refused).toEqual(['footprint'])
    expect(accepted).toBeLessThan(Math.ceil(PROJECT_LIMITS.footprintBytes / 24_000))
    expect(accepted).toBeGreaterThan(Math.floor(PROJECT_LIMITS.footprintBytes / 24_400))
  })
})
