// Flag and cohort writes under concurrency, on real Postgres and the embedded one: each write checks and writes in
// one transaction under the project's write lock, so two writes that are each valid alone but not together never
// both succeed (a dependency cycle, a dependency on a flag being deleted, a loop of nested cohorts), and a PATCH
// answers with what it wrote. A cycle stored anyway (by hand, or before this lock existed) does not stop /decide
// from answering the other flags, and can be broken through the API.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { flagsChanged, insertFlag } from '../helpers/flags'
import { json, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const ON = { groups: [{ properties: [], rollout_percentage: 100 }] }
const dependsOn = (id: number) => ({ groups: [{ properties: [{ key: String(id), type: 'flag', value: true, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }] })
const nested = (id: number) => ({ key: 'id', type: 'cohort', value: id })
const tree = (...filters: unknown[]) => ({ properties: { type: 'OR', values: [{ type: 'AND', values: filters }] } })
const person = { key: 'plan', type: 'person', value: 'pro', operator: 'exact' }
const TRIALS = 8

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`concurrent flag and cohort writes on ${postgres} Postgres`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(() => stack?.close())

    const flags = '/api/projects/1/feature_flags/'
    const create = async (key: string, filters: unknown = ON): Promise<number> => {
      const r = await stack.api(flags, { method: 'POST', json: { key, filters } })
      expect(r.status).toBe(201)
      return (await json(r)).id
    }
    const patch = (id: number, body: unknown) => stack.api(`${flags}${id}/`, { method: 'PATCH', json: body })
    const cohorts = '/api/projects/1/cohorts/'
    const createCohort = async (name: string, filters: unknown): Promise<number> => {
      const r = await stack.api(cohorts, { method: 'POST', json: { name, filters } })
      expect(r.status).toBe(201)
      return (await json(r)).id
    }
    const patchCohort = (id: number, body: unknown) => stack.api(`${cohorts}${id}/`, { method: 'PATCH', json: body })

    test('two PATCHes that would close a dependency cycle: never both succeed', async () => {
      for (let trial = 0; trial < TRIALS; trial++) {
        const x = await create(`cycle-x-${trial}`)
        const y = await create(`cycle-y-${trial}`)
        const [rx, ry] = await Promise.all([patch(x, { filters: dependsOn(y) }), patch(y, { filters: dependsOn(x) })])
        expect([rx.status, ry.status].sort()).toEqual([200, 400])
      }
    })

    test('a dependency on a flag being deleted: never both succeed', async () => {
      for (let trial = 0; trial < TRIALS; trial++) {
        const x = await create(`dependent-${trial}`)
        const y = await create(`doomed-${trial}`)
        const [rx, ry] = await Promise.all([patch(x, { filters: dependsOn(y) }), patch(y, { deleted: true })])
        expect([rx.status, ry.status].sort()).toEqual([200, 400])
        const stored = await json(stack.api(`${flags}${y}/`))
        const dependent = await json(stack.api(`${flags}${x}/`))
        // an active flag never ends up depending on a deleted one
        expect(stored.deleted && JSON.stringify(dependent.filters).includes(`"${y}"`)).toBe(false)
      }
    })

    test('each of 40 concurrent PATCHes answers with what it wrote', async () => {
      const id = await create('patched-often')
      const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => patch(id, { name: `writer ${i}` }).then((r) => json(r))))
      answers.forEach((flag, i) => expect(flag.name).toBe(`writer ${i}`))
      // each write is its own version
      expect(new Set(answers.map((f) => f.version)).size).toBe(40)
    })

    test('two cohort PATCHes that would close a loop: never both succeed', async () => {
      for (let trial = 0; trial < TRIALS; trial++) {
        const a = await createCohort(`loop-a-${trial}`, tree(person))
        const b = await createCohort(`loop-b-${trial}`, tree(person))
        const [ra, rb] = await Promise.all([patchCohort(a, { filters: tree(nested(b)) }), patchCohort(b, { filters: tree(nested(a)) })])
        expect([ra.status, rb.status].sort()).toEqual([200, 400])
      }
    })

    test('a cohort deleted while a flag starts to use it: the flag sees the deletion or the deletion sees the flag', async () => {
      for (let trial = 0; trial < TRIALS; trial++) {
        const c = await createCohort(`used-${trial}`, tree(person))
        const f = await create(`user-of-${trial}`)
        const onCohort = { groups: [{ properties: [{ key: 'id', type: 'cohort', value: c }], rollout_percentage: 100 }] }
        const [rd, rf] = await Promise.all([patchCohort(c, { deleted: true }), patch(f, { filters: onCohort })])
        expect(rf.status).toBe(200)
        // serialised: either the deletion came first (refused nothing) or it saw the active flag and was refused;
        // in both cases the cohort row and the answers agree
        const cohort = await json(stack.api(`${cohorts}${c}/`))
        expect(cohort.deleted).toBe(rd.status === 200)
      }
    })

    test('a dependency cycle already stored: /decide answers the other flags and the cycle can be broken', async () => {
      const sql = stack.services.db.sql
      const plain = await create('outside-the-cycle')
      const a = await insertFlag(sql, { key: 'stored-cycle-a', filters: ON })
      const b = await insertFlag(sql, { key: 'stored-cycle-b', filters: dependsOn(a) })
      await sql`update feature_flags set filters = ${sql.json(dependsOn(b) as never)} where id = ${a}`
      await flagsChanged(stack)
      const r = await stack.app.handle(
        new Request('http://localhost/flags/?v=2', { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'someone' }) }),
      )
      expect(r.status).toBe(200)
      const body = await json(r)
      expect(body.errorsWhileComputingFlags).toBe(true)
      expect(body.flags['outside-the-cycle'].enabled).toBe(true)
      expect(body.flags['stored-cycle-a']?.enabled ?? false).toBe(false)
      expect(plain).toBeGreaterThan(0)
      // neither flag could be disabled before (each "depends" on the other): the cycle is breakable now
      expect((await patch(a, { active: false })).status).toBe(200)
      expect((await patch(b, { deleted: true })).status).toBe(200)
    })
  })
}
