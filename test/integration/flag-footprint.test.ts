// What one project's flags may cost every process and every SDK, measured with the attack that took a process from
// 250 MB to 2.86 GB: a chain of flags with long keys depending on each other, and flags of thousands of
// `flag_evaluates_to` filters on its top, each of which local evaluation sends with the whole chain. Now the chain is
// at most PROJECT_LIMITS.dependencyDepth long, and the project's footprint (filters, chains as sent, cohorts) at
// most PROJECT_LIMITS.footprintBytes: the worst local_evaluation answer is bounded by it, and measured here.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PROJECT_LIMITS } from '../../src/flags/project-budget'
import { createProject } from '../../src/projects/repository'
import { json, PERSONAL_KEY, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const longKey = (i: number) => `chain-${i}-`.padEnd(400, 'x')
const onFlag = (id: number) => ({ key: String(id), type: 'flag', value: true, operator: 'flag_evaluates_to' })
const many = (id: number, groups: number, perGroup: number) => ({
  groups: Array.from({ length: groups }, () => ({ properties: Array.from({ length: perGroup }, () => onFlag(id)), rollout_percentage: 100 })),
})
const MB = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`

for (const postgres of ['embedded', 'real'] as StoreChoice[]) {
  describe(`a project's flag footprint on ${postgres} Postgres`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(() => stack?.close())
    const post = (body: unknown, project = 1) => stack.api(`/api/projects/${project}/feature_flags/`, { method: 'POST', json: body })

    test('dependency chains stop at the depth limit; the attack is refused; the worst accepted answer is measured', async () => {
      // the chain: each flag depends on the one before
      let top = (await json(post({ key: longKey(1), filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }))).id as number
      let below = top
      for (let i = 2; i <= PROJECT_LIMITS.dependencyDepth; i++) {
        below = top
        const r = await post({ key: longKey(i), filters: { groups: [{ properties: [onFlag(top)], rollout_percentage: 100 }] } })
        expect(r.status).toBe(201)
        top = (await json(r)).id
      }
      const tooDeep = await post({ key: longKey(99), filters: { groups: [{ properties: [onFlag(top)], rollout_percentage: 100 }] } })
      expect(tooDeep.status).toBe(400)
      expect((await json(tooDeep)).detail).toContain(`at most ${PROJECT_LIMITS.dependencyDepth} deep`)

      // the attack: 100 groups × 100 references to the deepest flag one may still depend on (inside every per-flag limit)
      const attack = await post({ key: 'attack', filters: many(below, 100, 100) })
      expect(attack.status).toBe(400)
      expect((await json(attack)).code).toBe('limit_exceeded')

      // fill the project up with smaller ones until refused: the worst a key holder can store
      let accepted = 0
      for (let i = 0; i < 12; i++) {
        const r = await post({ key: `filler-${i}`, filters: many(below, 100, 10) })
        if (r.status !== 201) {
          expect(r.status).toBe(400)
          expect((await json(r)).code).toBe('limit_exceeded')
          break
        }
        accepted++
      }
      expect(accepted).toBeGreaterThan(0)
      expect(accepted).toBeLessThan(12)

      const rssBefore = process.memoryUsage().rss
      const started = performance.now()
      const local = await stack.api('/api/projects/1/feature_flags/local_evaluation?send_cohorts')
      const body = await local.text()
      const ms = performance.now() - started
      const definitions = await (await stack.api(`/flags/definitions?token=${PROJECT_KEY}`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })).text()
      const rssAfter = process.memoryUsage().rss
      expect(local.status).toBe(200)
      // every chain is sent whole, and the whole answer stays within the project's footprint
      expect(body.length).toBeLessThanOrEqual(PROJECT_LIMITS.footprintBytes * 1.05)
      expect(definitions.length).toBe(body.length)
      const parsed = JSON.parse(body)
      const filler = parsed.flags.find((f: { key: string }) => f.key === 'filler-0')
      expect(filler.filters.groups[0].properties[0].dependency_chain).toHaveLength(PROJECT_LIMITS.dependencyDepth - 1)
      console.log(
        `worst local_evaluation on ${postgres}: ${accepted} filler flags accepted, answer ${MB(body.length)} (limit ${MB(PROJECT_LIMITS.footprintBytes)}) in ${ms.toFixed(0)} ms; ` +
          `/flags/definitions ${MB(definitions.length)}; test process RSS ${MB(rssBefore)} → ${MB(rssAfter)}`,
      )
    })

    test('flags of ~1 MB each: the project total is refused past the footprint limit', async () => {
      const big = (i: number) => ({
        key: `big-${i}`,
        filters: { groups: Array.from({ length: 100 }, () => ({ properties: Array.from({ length: 9 }, () => ({ key: 'email', type: 'person', operator: 'exact', value: 'v'.repeat(1000) })), rollout_percentage: 100 })) },
      })
      // a project of its own: the one above is full
      const { id: project } = await createProject(stack.services.db.sql, { name: 'Big flags' })
      let refused = -1
      for (let i = 0; i < 40; i++) {
        const r = await post(big(i), project)
        if (r.status === 400) {
          expect((await json(r)).code).toBe('limit_exceeded')
          refused = i
          break
        }
        expect(r.status).toBe(201)
      }
      // ~17 fit in 16 MiB, not 40 (nor the 5,000 flags a project may have)
      expect(refused).toBeGreaterThan(10)
      expect(refused).toBeLessThanOrEqual(18)
      // deleting shrinks the footprint: the write that shrinks is accepted, and then one more fits
      const first = (await json(stack.api(`/api/projects/${project}/feature_flags/?search=big-0`))).results[0]
      expect((await stack.api(`/api/projects/${project}/feature_flags/${first.id}/`, { method: 'PATCH', json: { deleted: true } })).status).toBe(200)
      expect((await post(big(100), project)).status).toBe(201)
    })

    test('1,500 flags of long names or long keys: refused past the footprint and the keys budget; answers stay within them', async () => {
      const flagsAnswer = async (token: string) => {
        const r = await stack.app.handle(new Request('http://localhost/flags/?v=2', { method: 'POST', body: JSON.stringify({ token, distinct_id: 'anonymous' }) }))
        expect(r.status).toBe(200)
        return (await r.text()).length
      }
      const filters = { groups: [{ properties: [], rollout_percentage: 100 }] }
      // most flags stored directly (posting each through the API takes minutes: every write reloads the project's
      // flags), the last ones through the API: the budget is checked against what is stored
      const seed = async (project: number, count: number, name: string, keyLength: number) => {
        const sql = stack.services.db.sql
        await sql`
          insert into feature_flags (team_id, key, name, filters, active, deleted, ensure_experience_continuity, version, tags)
          select ${project}, rpad('k' || n || '-', ${keyLength}, 'x'), ${name}, ${sql.json(filters)}, true, false, false, 1, '{}'::text[]
            from generate_series(0, ${count - 1}) as n`
        await stack.services.flags.cache.refresh(project)
      }
      /** flags posted from number `from` on until the first refusal: how many the project then has, and the refusal */
      const fill = async (project: number, from: number, flag: (i: number) => unknown) => {
        for (let i = from; i < 1500; i++) {
          const r = await post(flag(i), project)
          if (r.status !== 201) {
            expect(r.status).toBe(400)
            return { accepted: i, refusal: await json(r) }
          }
        }
        return { accepted: 1500, refusal: null }
      }
      const started = performance.now()
      // names of control characters: 4,000 characters, six bytes each as JSON (the 34 MB local_evaluation answer)
      const longName = '\u0001'.repeat(4000)
      const names = await createProject(stack.services.db.sql, { name: 'Long names' })
      await seed(names.id, 650, longName, 8)
      const byName = await fill(names.id, 650, (i) => ({ key: `k${i}-`.padEnd(8, 'x'), name: longName, filters }))
      expect(byName.refusal).toMatchObject({ code: 'limit_exceeded', attr: null })
      expect(byName.accepted).toBeLessThan(PROJECT_LIMITS.footprintBytes / 24_000)
      const local = await stack.api(`/api/projects/${names.id}/feature_flags/local_evaluation`)
      const localBytes = (await local.text()).length
      expect(local.status).toBe(200)
      expect(localBytes).toBeLessThanOrEqual(PROJECT_LIMITS.footprintBytes)

      // keys of 400 characters (the 1.5 MB anonymous /flags answers)
      const keys = await createProject(stack.services.db.sql, { name: 'Long keys' })
      await seed(keys.id, 620, '', 400)
      const byKey = await fill(keys.id, 620, (i) => ({ key: `k${i}-`.padEnd(400, 'x'), filters }))
      expect(byKey.refusal).toMatchObject({ code: 'limit_exceeded', attr: 'key' })
      expect(byKey.accepted).toBe(Math.floor(PROJECT_LIMITS.keysBytes / 402))
      // a shorter key still fits in what is left
      expect((await post({ key: 'short', filters }, keys.id)).status).toBe(201)
      const anonymous = await flagsAnswer(keys.api_token)
      // each key twice, and a detail of a few hundred bytes a flag
      expect(anonymous).toBeLessThanOrEqual(2 * PROJECT_LIMITS.keysBytes + (byKey.accepted + 1) * 400)

      const metrics = await (await stack.app.handle(new Request('http://localhost/metrics'))).text()
      expect(metrics).toMatch(/flag_writes_refused_total\{limit="footprint"\} [1-9]/)
      expect(metrics).toMatch(/flag_writes_refused_total\{limit="keys"\} [1-9]/)
      console.log(
        `${postgres}: long names: ${byName.accepted} flags accepted, local_evaluation ${MB(localBytes)}; long keys: ${byKey.accepted} accepted, ` +
          `anonymous /flags ${(anonymous / 1024).toFixed(0)} KB (before: 1,500 of each, 34 MB and 1.5 MB) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      )
    })
  })
}
