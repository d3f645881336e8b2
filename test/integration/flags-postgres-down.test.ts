// Postgres stops under /decide: flags needing no stored data are still answered, the rest are left out with
// errorsWhileComputingFlags / errorComputingFlags; never a 500; everything recovers when Postgres returns.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { createFlag, decideRequest, flagsChanged, insertFlag, insertGroup, insertGroupType, insertPerson } from '../helpers/flags'
import { startPostgres, type PostgresServer } from '../helpers/postgres-server'
import { json, PERSONAL_KEY, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

describe('/decide while Postgres is down', () => {
  let pg: PostgresServer
  let stack: Stack
  let otherToken: string
  beforeAll(async () => {
    pg = await startPostgres()
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { DATABASE_URL: await pg.createDatabase() })
    const sql = stack.services.db.sql
    await createFlag(stack, { key: 'everyone', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
    await createFlag(stack, {
      key: 'by-email',
      filters: { groups: [{ properties: [{ key: 'email', value: '@posthog.com', operator: 'icontains', type: 'person' }] }] },
    })
    await insertGroupType(sql, 'company', 0)
    await createFlag(stack, {
      key: 'by-company',
      filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'group', group_type_index: 0 }] }] },
    })
    await createFlag(stack, { key: 'continuous', ensure_experience_continuity: true, filters: { groups: [{ rollout_percentage: 100 }] } })
    await insertPerson(sql, ['staff'], { email: 'ann@posthog.com' })
    await insertPerson(sql, ['staff-2'], { email: 'cy@posthog.com' })
    await insertGroup(sql, 0, 'acme', { plan: 'pro' })
    await insertGroup(sql, 0, 'acme-2', { plan: 'pro' })
    await insertFlag(sql, { key: 'legacy', filters: {}, rolloutPercentage: 100 })
    await flagsChanged(stack)
    // a second project whose flags this process has never loaded
    const other = await createProject(sql, { name: 'never loaded' })
    otherToken = other.api_token
    stack.services.tokens.add(other.api_token, other.id)
  })
  afterAll(async () => {
    await stack?.close()
    await pg?.destroy()
  })

  const ask = async (v: number, body: Record<string, unknown>, token = PROJECT_KEY) => {
    const r = await stack.app.handle(decideRequest(`/decide/?v=${v}`, { api_key: token, ...body }))
    return { status: r.status, body: await json(r) }
  }
  const staff = { distinct_id: 'staff', groups: { company: 'acme' } }
  /** never asked about while Postgres is up: not in the person cache */
  const staff2 = { distinct_id: 'staff-2', groups: { company: 'acme-2' } }

  test('while up, everything is computed', async () => {
    const r = await ask(3, staff)
    expect(r).toMatchObject({
      status: 200,
      body: {
        featureFlags: { everyone: true, 'by-email': true, 'by-company': true, continuous: true, legacy: true },
        errorsWhileComputingFlags: false,
        errorComputingFlags: false,
      },
    })
  })

  test('down: what needs no stored data is answered, the rest left out and flagged; never a 500', async () => {
    await pg.stop()
    // a person and group read while up are answered from memory (nothing can change them while Postgres is down)
    const cached = await ask(3, staff)
    expect(cached.body.featureFlags).toEqual({ everyone: true, 'by-email': true, 'by-company': true, legacy: true })
    expect(cached.body.errorsWhileComputingFlags).toBe(true) // the continuity flag needs Postgres
    const v3 = await ask(3, { ...staff2 })
    expect(v3.status).toBe(200)
    expect(v3.body.featureFlags).toEqual({ everyone: true, legacy: true })
    expect(v3.body).toMatchObject({ errorsWhileComputingFlags: true, errorComputingFlags: true })
    // overrides make stored data unnecessary: those flags are computed again
    const overridden = await ask(3, { ...staff2, person_properties: { email: 'bob@posthog.com' }, group_properties: { company: { plan: 'pro' } } })
    expect(overridden.body.featureFlags).toEqual({ everyone: true, 'by-email': true, 'by-company': true, legacy: true })
    expect(overridden.body.errorsWhileComputingFlags).toBe(true) // the continuity flag still needs Postgres
    const v4 = await ask(4, staff2)
    expect(v4.status).toBe(200)
    expect(Object.keys(v4.body.flags).sort()).toEqual(['everyone', 'legacy'])
    expect(v4.body.errorsWhileComputingFlags).toBe(true)
    for (const v of [1, 2]) expect((await ask(v, staff2)).status).toBe(200)
    const flags = await stack.app.handle(decideRequest('/flags/?v=2', { token: PROJECT_KEY, ...staff2 }))
    expect(flags.status).toBe(200)
    expect((await json(flags)).errorsWhileComputingFlags).toBe(true)
    // a project whose flags were never loaded: nothing can be computed, still 200
    const other = await ask(3, { distinct_id: 'x' }, otherToken)
    expect(other).toMatchObject({ status: 200, body: { featureFlags: {}, errorsWhileComputingFlags: true } })
    // an unknown token cannot be told from a valid one: 503 fetch_team_fail (once the token cache's
    // once-a-second reload on a miss has found Postgres gone)
    await Bun.sleep(1100)
    const unknown = await ask(3, { distinct_id: 'x' }, 'phc_not_known_while_down')
    expect(unknown).toMatchObject({ status: 503, body: { type: 'server_error', code: 'fetch_team_fail' } })
    // a personal key with project_id on the public endpoints: the team cannot be fetched either
    const personal = { api_key: PERSONAL_KEY, project_id: 1, distinct_id: 'x', event: 'e' }
    for (const path of ['/decide/?v=3', '/flags/?v=2', '/capture/']) {
      const r = await stack.app.handle(decideRequest(path, personal))
      expect({ path, status: r.status, body: await json(r) }).toMatchObject({ path, status: 503, body: { type: 'server_error', code: 'fetch_team_fail' } })
    }
    // the REST API says the database is unavailable
    const rest = await stack.api('/api/projects/1/feature_flags/')
    expect(rest.status).toBe(503)
    // many requests in a row stay fast: no waiting on a dead server per request
    const start = performance.now()
    for (let i = 0; i < 50; i++) expect((await ask(3, { ...staff, distinct_id: `u${i}` })).status).toBe(200)
    expect(performance.now() - start).toBeLessThan(5000)
  })

  test('back up: recovers without a restart', async () => {
    await pg.start()
    const deadline = Date.now() + 20_000
    let last: { status: number; body: any } | undefined
    while (Date.now() < deadline) {
      last = await ask(3, staff)
      if (last.status === 200 && last.body.errorsWhileComputingFlags === false) break
      await Bun.sleep(200)
    }
    expect(last).toMatchObject({
      status: 200,
      body: { featureFlags: { everyone: true, 'by-email': true, 'by-company': true, continuous: true, legacy: true }, errorsWhileComputingFlags: false },
    })
    expect((await ask(3, { distinct_id: 'x' }, otherToken)).body.errorsWhileComputingFlags).toBe(false)
    // writes work again and are seen at once
    const r = await stack.api('/api/projects/1/feature_flags/', {
      method: 'POST',
      json: { key: 'after-outage', filters: { groups: [{ rollout_percentage: 100 }] } },
    })
    expect(r.status).toBe(201)
    expect((await ask(3, staff)).body.featureFlags['after-outage']).toBe(true)
  })
})
