// Flags on cohorts and on other flags, answered by /decide (v1–v4) and /flags?v=2 through HTTP, on real Postgres and
// on the embedded one: dynamic cohorts on stored properties and on overrides, static membership by person (every
// alias, and after a merge), nesting, not_in, deleted and foreign cohorts, dependencies; and local_evaluation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { createFlag, decide, insertFlag, insertPerson } from '../helpers/flags'
import { BASE, json, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const person = (key: string, value: unknown, operator = 'exact') => ({ key, type: 'person', value, operator })
const nested = (id: number, negation?: boolean) => ({ key: 'id', type: 'cohort', value: id, ...(negation ? { negation } : {}) })
const tree = (...filters: unknown[]) => ({ properties: { type: 'OR', values: [{ type: 'AND', values: filters }] } })
const onCohort = (id: number, operator?: string) => ({
  groups: [{ properties: [{ key: 'id', type: 'cohort', value: id, ...(operator ? { operator } : {}) }], rollout_percentage: 100 }],
})
const onFlag = (id: number, value: unknown) => ({ groups: [{ properties: [{ key: String(id), type: 'flag', value, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }] })

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`cohorts and dependencies in /decide on ${postgres} Postgres`, () => {
    let stack: Stack
    const ids: Record<string, number> = {}
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20 })
      const sql = stack.services.db.sql
      await insertPerson(sql, ['pro-user'], { plan: 'pro', country: 'DE' })
      await insertPerson(sql, ['free-user'], { plan: 'free', country: 'DE' })
      await insertPerson(sql, ['member', 'member-alias', 'member-device'], { plan: 'free' })
      const cohort = async (body: unknown) => {
        const r = await stack.api('/api/projects/1/cohorts/', { method: 'POST', json: body })
        expect(r.status).toBe(201)
        return (await json(r)).id as number
      }
      ids.pro = await cohort({ name: 'Pro', filters: tree(person('plan', 'pro')) })
      const form = new FormData()
      form.append('name', 'Beta testers')
      form.append('is_static', 'true')
      form.append('csv', new File(['member-device\nnobody\n'], 'beta.csv'))
      const r = await stack.api('/api/projects/1/cohorts/', { method: 'POST', body: form })
      expect(r.status).toBe(201)
      ids.beta = (await json(r)).id
      // pro users in Germany, or beta testers
      ids.nested = await cohort({
        name: 'Pro Germans or beta',
        filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [nested(ids.pro), person('country', 'DE')] }, { type: 'AND', values: [nested(ids.beta)] }] } },
      })
      ids.notPro = await cohort({ name: 'Not pro', filters: tree(nested(ids.pro, true)) })
      for (const [key, filters] of [
        ['in-pro', onCohort(ids.pro)],
        ['not-in-pro', onCohort(ids.pro, 'not_in')],
        ['in-beta', onCohort(ids.beta)],
        ['in-nested', onCohort(ids.nested)],
        ['in-not-pro', onCohort(ids.notPro)],
      ] as const) {
        ids[key] = (await createFlag(stack, { key, filters })).id
      }
      ids.base = (await createFlag(stack, { key: 'base', filters: { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'red', rollout_percentage: 100 }] } } })).id
      ids.off = (await createFlag(stack, { key: 'off', filters: { groups: [{ properties: [], rollout_percentage: 0 }] } })).id
      for (const [key, filters] of [
        ['dep-true', onFlag(ids.base, true)],
        ['dep-red', onFlag(ids.base, 'red')],
        ['dep-blue', onFlag(ids.base, 'blue')],
        ['dep-off-false', onFlag(ids.off, false)],
        ['dep-off-true', onFlag(ids.off, true)],
        ['dep-on-pro', onFlag(ids['in-pro'], true)],
      ] as const) {
        ids[key] = (await createFlag(stack, { key, filters })).id
      }
      // dependencies of dependencies
      ids['dep-chain'] = (await createFlag(stack, { key: 'dep-chain', filters: onFlag(ids['dep-on-pro'], true) })).id
    })
    afterAll(() => stack?.close())

    const flags = async (distinctId: string, extra: Record<string, unknown> = {}) => (await decide(stack, 3, { distinct_id: distinctId, ...extra })).featureFlags

    test('dynamic cohorts on stored properties, with not_in, negation and nesting', async () => {
      const pro = await flags('pro-user')
      expect(pro).toMatchObject({ 'in-pro': true, 'not-in-pro': false, 'in-nested': true, 'in-not-pro': false, 'in-beta': false })
      const free = await flags('free-user')
      expect(free).toMatchObject({ 'in-pro': false, 'not-in-pro': true, 'in-nested': false, 'in-not-pro': true, 'in-beta': false })
    })

    test('request overrides win over stored properties, and alone satisfy a dynamic cohort (a person never seen)', async () => {
      expect(await flags('free-user', { person_properties: { plan: 'pro' } })).toMatchObject({ 'in-pro': true, 'in-nested': true })
      expect(await flags('pro-user', { person_properties: { plan: 'free' } })).toMatchObject({ 'in-pro': false, 'not-in-pro': true })
      expect(await flags('never-seen', { person_properties: { plan: 'pro', country: 'DE' } })).toMatchObject({ 'in-pro': true, 'in-nested': true, 'in-beta': false })
      expect(await flags('never-seen')).toMatchObject({ 'in-pro': false, 'in-beta': false })
    })

    test('a static cohort is membership of the person: every alias matches; overrides make nobody a member', async () => {
      for (const id of ['member', 'member-alias', 'member-device']) expect(await flags(id)).toMatchObject({ 'in-beta': true, 'in-nested': true })
      expect(await flags('free-user', { person_properties: { id: ids.beta } })).toMatchObject({ 'in-beta': false })
    })

    test('a merge keeps the static memberships of the person merged away', async () => {
      const sql = stack.services.db.sql
      await insertPerson(sql, ['anon-device'], {})
      await insertPerson(sql, ['signed-up'], {})
      const [{ uuid }] = await sql`select p.uuid::text from persons p join person_distinct_ids d on d.person_id = p.id where d.distinct_id = 'anon-device'`
      const add = await stack.api(`/api/projects/1/cohorts/${ids.beta}/add_persons_to_static_cohort/`, { method: 'PATCH', json: { person_ids: [uuid] } })
      expect(add.status).toBe(200)
      expect(await flags('signed-up')).toMatchObject({ 'in-beta': false })
      // $identify merges the anonymous person into the signed-up one
      const r = await stack.app.handle(
        new Request(`${BASE}/batch/`, {
          method: 'POST',
          body: JSON.stringify({ api_key: PROJECT_KEY, batch: [{ event: '$identify', properties: { distinct_id: 'signed-up', $anon_distinct_id: 'anon-device' } }] }),
        }),
      )
      expect(r.status).toBe(200)
      const deadline = Date.now() + 15_000
      let merged = false
      while (Date.now() < deadline && !merged) {
        const [row] = await sql`select count(distinct person_id)::int as n from person_distinct_ids where distinct_id in ('anon-device', 'signed-up')`
        merged = row.n === 1
        if (!merged) await Bun.sleep(25)
      }
      expect(merged).toBe(true)
      // the flush worker's notice of the merge reaches /decide's person cache a moment after the commit
      const seen = Date.now()
      while (Date.now() - seen < 1000 && (await flags('signed-up'))['in-beta'] !== true) await Bun.sleep(10)
      expect(await flags('signed-up')).toMatchObject({ 'in-beta': true })
      expect(await flags('anon-device')).toMatchObject({ 'in-beta': true })
    })

    test('a cohort change reaches /decide at once', async () => {
      const c = await json(stack.api('/api/projects/1/cohorts/', { method: 'POST', json: { name: 'Changing', filters: tree(person('plan', 'pro')) } }))
      await createFlag(stack, { key: 'changing', filters: onCohort(c.id) })
      expect((await flags('pro-user'))['changing']).toBe(true)
      expect((await stack.api(`/api/projects/1/cohorts/${c.id}/`, { method: 'PATCH', json: { filters: tree(person('plan', 'team')) } })).status).toBe(200)
      expect((await flags('pro-user'))['changing']).toBe(false)
    })

    test('a deleted cohort and another project cohort never match, without errors', async () => {
      const c = await json(stack.api('/api/projects/1/cohorts/', { method: 'POST', json: { name: 'Doomed', filters: tree(person('plan', 'pro')) } }))
      const f = await createFlag(stack, { key: 'on-doomed', filters: onCohort(c.id) })
      expect((await flags('pro-user'))['on-doomed']).toBe(true)
      // deactivate, delete the cohort, re-activate: the one way to a flag on a deleted cohort
      await stack.api(`/api/projects/1/feature_flags/${f.id}/`, { method: 'PATCH', json: { active: false } })
      expect((await stack.api(`/api/projects/1/cohorts/${c.id}/`, { method: 'PATCH', json: { deleted: true } })).status).toBe(200)
      await stack.api(`/api/projects/1/feature_flags/${f.id}/`, { method: 'PATCH', json: { active: true } })
      const after = await decide(stack, 3, { distinct_id: 'pro-user' })
      expect(after.featureFlags['on-doomed']).toBe(false)
      expect(after.errorsWhileComputingFlags).toBe(false)

      const sql = stack.services.db.sql
      const [org] = await sql`insert into organizations (name) values ('Other org') returning id`
      const other = await createProject(sql, { name: 'Other', organizationId: org.id })
      const [{ id: theirs }] = await sql`insert into cohorts (team_id, name, filters) values (${other.id}, 'Theirs', ${sql.json(tree(person('plan', 'pro')) as never)}) returning id`
      await insertFlag(sql, { key: 'on-theirs', filters: onCohort(theirs) })
      await stack.services.flags.cache.refresh(1)
      expect((await flags('pro-user'))['on-theirs']).toBe(false)
    })

    test('dependencies: true matches any variant, a string its variant, false only false; chains evaluate in order', async () => {
      const f = await flags('pro-user')
      expect(f).toMatchObject({ base: 'red', 'dep-true': true, 'dep-red': true, 'dep-blue': false, 'dep-off-false': true, 'dep-off-true': false, 'dep-on-pro': true, 'dep-chain': true })
      expect(await flags('free-user')).toMatchObject({ 'dep-on-pro': false, 'dep-chain': false })
    })

    test('asking for some flags evaluates what they depend on without answering it', async () => {
      const r = await decide(stack, 3, { distinct_id: 'pro-user', flag_keys_to_evaluate: ['dep-chain'] })
      expect(r.featureFlags).toEqual({ 'dep-chain': true })
    })

    test('every version answers cohort and dependency flags', async () => {
      const v1 = await decide(stack, 1, { distinct_id: 'member' })
      expect(v1.featureFlags).toEqual(expect.arrayContaining(['in-beta', 'dep-red']))
      expect(v1.featureFlags).not.toContain('in-pro')
      const v2 = await decide(stack, 2, { distinct_id: 'member' })
      expect(v2.featureFlags).toMatchObject({ 'in-beta': true, base: 'red', 'dep-red': true })
      for (const v of [4] as const) {
        const out = await decide(stack, v, { distinct_id: 'member' })
        expect(out.flags['in-beta']).toMatchObject({ key: 'in-beta', enabled: true, reason: { code: 'condition_match' } })
        expect(out.flags['in-pro']).toMatchObject({ enabled: false, reason: { code: 'no_condition_match' } })
        expect(out.flags['dep-red']).toMatchObject({ enabled: true })
      }
      const r = await stack.app.handle(new Request(`${BASE}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: 'member' }) }))
      const body = await json(r)
      expect(body.flags['in-beta']).toMatchObject({ enabled: true })
      expect(body.flags['dep-blue']).toMatchObject({ enabled: false })
    })

    test('local_evaluation: send_cohorts gives the dynamic cohorts flags use (nested ones too, not static ones); dependencies carry keys and chains', async () => {
      const le = (query: string) => json(stack.api(`/api/feature_flag/local_evaluation?token=${PROJECT_KEY}${query}`))
      const without = await le('')
      expect(without.cohorts).toEqual({})
      const withCohorts = await le('&send_cohorts')
      const sent = Object.keys(withCohorts.cohorts)
      for (const id of [ids.pro, ids.nested, ids.notPro]) expect(sent).toContain(String(id))
      expect(sent).not.toContain(String(ids.beta))
      expect(withCohorts.cohorts[String(ids.pro)]).toEqual({ type: 'OR', values: [{ type: 'AND', values: [person('plan', 'pro')] }] })
      const byKey = new Map(withCohorts.flags.map((f: { key: string }) => [f.key, f]))
      const prop = (key: string) => (byKey.get(key) as any).filters.groups[0].properties[0]
      expect(prop('dep-red')).toEqual({ key: 'base', type: 'flag', value: 'red', operator: 'flag_evaluates_to', dependency_chain: ['base'] })
      expect(prop('dep-chain')).toMatchObject({ key: 'dep-on-pro', dependency_chain: ['in-pro', 'dep-on-pro'] })
      expect(prop('in-pro')).toEqual({ key: 'id', type: 'cohort', value: ids.pro })
      // the project's own endpoint and posthog-node 5's path agree
      expect(await json(stack.api(`/flags/definitions?token=${PROJECT_KEY}&send_cohorts`))).toEqual(withCohorts)
      expect(await json(stack.api('/api/projects/1/feature_flags/local_evaluation?send_cohorts'))).toEqual(withCohorts)
    })
  })
}
