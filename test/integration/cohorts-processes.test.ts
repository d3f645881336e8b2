// Two server processes sharing one Postgres: a cohort written through one changes the other's /decide answers
// within a second (cohort writes bump the flag version, as flag writes do), and a static member added through one
// counts on the other at once (memberships are read per request, not cached).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { insertPerson } from '../helpers/flags'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshDataDir, freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

const api = async (p: ServiceProcess, path: string, init: { method?: string; json?: unknown } = {}) => {
  const r = await fetch(`${p.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  })
  return { status: r.status, body: (await r.json()) as any }
}

const flagsOf = async (p: ServiceProcess, distinctId: string, personProperties: Record<string, unknown> = {}) => {
  const r = await fetch(`${p.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: distinctId, person_properties: personProperties }) })
  expect(r.status).toBe(200)
  return ((await r.json()) as any).featureFlags as Record<string, unknown>
}

/** ms until the check holds on p (polling every 10 ms), or -1 after 5 s */
const until = async (check: () => Promise<boolean>): Promise<number> => {
  const start = performance.now()
  while (performance.now() - start < 5000) {
    if (await check()) return performance.now() - start
    await Bun.sleep(10)
  }
  return -1
}

/** the check holds within a second */
const within = async (check: () => Promise<boolean>): Promise<boolean> => {
  const ms = await until(check)
  return ms >= 0 && ms < 1000
}

const tree = (key: string, value: string) => ({ properties: { type: 'OR', values: [{ type: 'AND', values: [{ key, type: 'person', value, operator: 'exact' }] }] } })
const onCohort = (id: number) => ({ groups: [{ properties: [{ key: 'id', type: 'cohort', value: id }], rollout_percentage: 100 }] })

describe('cohorts across two processes', () => {
  let a: ServiceProcess
  let b: ServiceProcess
  let sql: postgres.Sql
  beforeAll(async () => {
    const env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
    // the version check is pushed out to a minute: only NOTIFY can tell B within the test
    a = await spawnService({ ...env, LOG_LEVEL: 'warn', FLAG_REFRESH_INTERVAL_MS: '60000' })
    b = await spawnService({ ...env, DATA_DIR: await freshDataDir('real'), LOG_LEVEL: 'warn', FLAG_REFRESH_INTERVAL_MS: '60000' })
    sql = postgres(env.DATABASE_URL, { max: 1, onnotice: () => undefined })
  })
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), sql?.end()])
  })

  test('a cohort change made on A reaches /decide on B within a second', async () => {
    const cohort = await api(a, '/api/projects/@current/cohorts/', { method: 'POST', json: { name: 'Pro', filters: tree('plan', 'pro') } })
    expect(cohort.status).toBe(201)
    expect((await api(a, '/api/projects/@current/feature_flags/', { method: 'POST', json: { key: 'pro-only', filters: onCohort(cohort.body.id) } })).status).toBe(201)
    const pro = { plan: 'pro' }
    expect(await within(async () => (await flagsOf(b, 'x', pro))['pro-only'] === true)).toBe(true)
    const patched = await api(a, `/api/projects/@current/cohorts/${cohort.body.id}/`, { method: 'PATCH', json: { filters: tree('plan', 'team') } })
    expect(patched.status).toBe(200)
    expect((await flagsOf(a, 'x', pro))['pro-only']).toBe(false) // the writer: at once
    expect(await within(async () => (await flagsOf(b, 'x', pro))['pro-only'] === false)).toBe(true)
  })

  test('a static member added on A counts on A at once and on B within a second (both had the person in memory)', async () => {
    await insertPerson(sql, ['late-joiner'], {})
    const cohort = await api(a, '/api/projects/@current/cohorts/', { method: 'POST', json: { name: 'Joiners', is_static: true } })
    expect((await api(a, '/api/projects/@current/feature_flags/', { method: 'POST', json: { key: 'joiners', filters: onCohort(cohort.body.id) } })).status).toBe(201)
    expect(await within(async () => (await flagsOf(b, 'late-joiner'))['joiners'] === false)).toBe(true)
    expect((await flagsOf(a, 'late-joiner'))['joiners']).toBe(false)
    const [{ uuid }] = await sql`select p.uuid::text from persons p join person_distinct_ids d on d.person_id = p.id where d.distinct_id = 'late-joiner'`
    const added = await api(a, `/api/projects/@current/cohorts/${cohort.body.id}/add_persons_to_static_cohort/`, { method: 'PATCH', json: { person_ids: [uuid] } })
    expect(added.status).toBe(200)
    expect((await flagsOf(a, 'late-joiner'))['joiners']).toBe(true)
    expect(await within(async () => (await flagsOf(b, 'late-joiner'))['joiners'] === true)).toBe(true)
  })
})
