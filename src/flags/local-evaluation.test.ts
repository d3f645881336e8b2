// local_evaluation bodies: the cohorts map (send_cohorts) and dependency chains, from a cache entry.
import { describe, expect, test } from 'bun:test'
import { buildEntry } from './cache'
import { localEvaluationOf } from './local-evaluation'
import type { CachedCohortRow, CachedFlagRow } from './repository'

const depends = (id: number | string, value: unknown = true) => ({ key: String(id), type: 'flag', value, operator: 'flag_evaluates_to' })
const flag = (id: number, key: string, properties: unknown[] = [], active = true): CachedFlagRow => ({
  id,
  team_id: 1,
  key,
  name: '',
  filters: { groups: [{ properties, rollout_percentage: 100 }] },
  rollout_percentage: null,
  active,
  deleted: false,
  ensure_experience_continuity: false,
  version: 1,
})

function body(flags: CachedFlagRow[], cohorts: CachedCohortRow[] = [], sendCohorts = true) {
  return JSON.parse(localEvaluationOf(buildEntry(1, { version: 1, flags, groupTypes: [], cohorts }), sendCohorts).body)
}

/** each flag key → the (key, dependency_chain) of its flag filters */
function chains(flags: CachedFlagRow[]): Record<string, [string, string[]][]> {
  const out: Record<string, [string, string[]][]> = {}
  for (const f of body(flags).flags) {
    out[f.key] = f.filters.groups.flatMap((g: { properties: { type: string; key: string; dependency_chain: string[] }[] }) =>
      g.properties.filter((p) => p.type === 'flag').map((p) => [p.key, p.dependency_chain]),
    )
  }
  return out
}

describe('dependency chains', () => {
  test('keys replace ids; chains list dependencies first and end with the dependency (c → b → a)', () => {
    const flags = [flag(1, 'a'), flag(2, 'b', [depends(1)]), flag(3, 'c', [depends(2)])]
    expect(chains(flags)).toEqual({ a: [], b: [['a', ['a']]], c: [['b', ['a', 'b']]] })
  })
  test('a flag on two dependencies gets one chain per filter; d → c(→ a, b) gets [a, b, c]', () => {
    const flags = [flag(1, 'a'), flag(2, 'b'), flag(3, 'c', [depends(1), depends(2)]), flag(4, 'd', [depends(3)])]
    expect(chains(flags)).toEqual({ a: [], b: [], c: [['a', ['a']], ['b', ['b']]], d: [['c', ['a', 'b', 'c']]] })
  })
  test('a self-dependency, a cycle or a flag that is not sent gives an empty chain (the id stays when nothing matches)', () => {
    const flags = [flag(1, 'self', [depends(1)]), flag(2, 'x', [depends(3)]), flag(3, 'y', [depends(2)]), flag(4, 'lost', [depends(99)])]
    expect(chains(flags)).toEqual({ self: [['self', []]], x: [['y', []]], y: [['x', []]], lost: [['99', []]] })
  })
  test('inactive flags are sent and take part in chains (clients evaluate them as false)', () => {
    expect(chains([flag(1, 'off', [], false), flag(2, 'on', [depends(1)])])).toEqual({ off: [], on: [['off', ['off']]] })
  })
})

describe('cohorts', () => {
  const dynamic: CachedCohortRow = {
    id: 7,
    is_static: false,
    version: 1,
    filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: '$some_prop', type: 'person', value: 'x', operator: null, negation: false }] }] } },
  }
  const uses = [flag(1, 'f', [{ key: 'id', type: 'cohort', value: 7 }, { key: 'id', type: 'cohort', value: 8 }])]
  test('with send_cohorts: the dynamic cohorts, rendered without null keys; static ones are left out', () => {
    const b = body(uses, [dynamic, { id: 8, is_static: true, filters: null, version: 1 }])
    expect(b.cohorts).toEqual({ '7': { type: 'OR', values: [{ type: 'AND', values: [{ key: '$some_prop', type: 'person', value: 'x', negation: false }] }] } })
    // flag filters are sent unchanged
    expect(b.flags[0].filters.groups[0].properties[0]).toEqual({ key: 'id', type: 'cohort', value: 7 })
  })
  test('without send_cohorts: {}; an empty cohort renders {}', () => {
    expect(body(uses, [dynamic], false).cohorts).toEqual({})
    expect(body(uses, [{ id: 7, is_static: false, version: 1, filters: { properties: {} } }]).cohorts).toEqual({ '7': {} })
  })
  test('the two bodies have their own ETags', () => {
    const entry = buildEntry(1, { version: 1, flags: uses, groupTypes: [], cohorts: [dynamic] })
    expect(localEvaluationOf(entry, true).etag).not.toBe(localEvaluationOf(entry, false).etag)
  })
})

describe('an answer too large to build', () => {
  test("stored before the project limits (the issue's attack: a chain of 60 long keys, 10,000 references): 503 before it is built", () => {
    const chain: CachedFlagRow[] = []
    for (let i = 1; i <= 60; i++) chain.push(flag(i, `chain-${i}-`.padEnd(400, 'x'), i === 1 ? [] : [depends(i - 1)]))
    const attack: CachedFlagRow = {
      ...flag(100, 'attack'),
      filters: { groups: Array.from({ length: 100 }, () => ({ properties: Array.from({ length: 100 }, () => depends(60)), rollout_percentage: 100 })) },
    }
    const rss = process.memoryUsage().rss
    expect(() => body([...chain, attack])).toThrow('local evaluation answer of more than')
    // nothing of the 85 MB answer was made on the way
    expect(process.memoryUsage().rss - rss).toBeLessThan(64 * 1024 * 1024)
    // the chain alone is answered
    expect(body(chain).flags).toHaveLength(60)
  })
})
