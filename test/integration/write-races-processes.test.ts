// Two server processes on one Postgres, each PATCHing one of two flags so that together they would depend on each
// other: the project's write lock is a Postgres advisory lock, so it holds across processes (never both succeed).
import { describe, expect, test } from 'bun:test'
import type { ServiceProcess } from '../helpers/spawn-service'
import { PERSONAL_KEY } from '../helpers/stack'
import { twoProcessesOnOnePostgres } from '../helpers/two-processes'

const api = (p: ServiceProcess, path: string, method = 'GET', json?: unknown) =>
  fetch(`${p.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  })
const ON = { groups: [{ properties: [], rollout_percentage: 100 }] }
const dependsOn = (id: number) => ({ groups: [{ properties: [{ key: String(id), type: 'flag', value: true, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }] })

describe('flag writes racing across two processes', () => {
  const pair = twoProcessesOnOnePostgres()

  test('a dependency cycle and a dependency on a deleted flag are never both written', async () => {
    const { a, b } = pair
    for (let trial = 0; trial < 10; trial++) {
      const x = (await (await api(a, '/api/projects/1/feature_flags/', 'POST', { key: `px-${trial}`, filters: ON })).json()) as any
      const y = (await (await api(a, '/api/projects/1/feature_flags/', 'POST', { key: `py-${trial}`, filters: ON })).json()) as any
      const [rx, ry] = await Promise.all([
        api(a, `/api/projects/1/feature_flags/${x.id}/`, 'PATCH', { filters: dependsOn(y.id) }),
        api(b, `/api/projects/1/feature_flags/${y.id}/`, 'PATCH', { filters: dependsOn(x.id) }),
      ])
      expect([rx.status, ry.status].sort()).toEqual([200, 400])
      const z = (await (await api(a, '/api/projects/1/feature_flags/', 'POST', { key: `pz-${trial}`, filters: ON })).json()) as any
      const w = (await (await api(a, '/api/projects/1/feature_flags/', 'POST', { key: `pw-${trial}`, filters: ON })).json()) as any
      const [rz, rw] = await Promise.all([
        api(a, `/api/projects/1/feature_flags/${z.id}/`, 'PATCH', { filters: dependsOn(w.id) }),
        api(b, `/api/projects/1/feature_flags/${w.id}/`, 'PATCH', { deleted: true }),
      ])
      expect([rz.status, rw.status].sort()).toEqual([200, 400])
    }
  })

  test('two cohort PATCHes on two processes that would close a loop: never both succeed', async () => {
    const { a, b } = pair
    const tree = (...values: unknown[]) => ({ properties: { type: 'OR', values: [{ type: 'AND', values }] } })
    const person = { key: 'plan', type: 'person', value: 'pro', operator: 'exact' }
    const nested = (id: number) => ({ key: 'id', type: 'cohort', value: id })
    for (let trial = 0; trial < 10; trial++) {
      const c = (await (await api(a, '/api/projects/1/cohorts/', 'POST', { name: `pa-${trial}`, filters: tree(person) })).json()) as any
      const d = (await (await api(b, '/api/projects/1/cohorts/', 'POST', { name: `pb-${trial}`, filters: tree(person) })).json()) as any
      const [rc, rd] = await Promise.all([
        api(a, `/api/projects/1/cohorts/${c.id}/`, 'PATCH', { filters: tree(nested(d.id)) }),
        api(b, `/api/projects/1/cohorts/${d.id}/`, 'PATCH', { filters: tree(nested(c.id)) }),
      ])
      expect([rc.status, rd.status].sort()).toEqual([200, 400])
    }
  })
})
