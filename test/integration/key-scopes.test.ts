// Personal keys do what they say: scopes are enforced on every private route (the table below: route × scope), a
// key limited to some projects (scoped_teams) or organizations reaches no other, the private API's rate limit counts
// per user (rotating keys buys nothing), the unknown-key throttle is per client address (the proxy's own
// X-Forwarded-For entry, not the client's), and @current follows a user moved to another organization.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Sql } from 'postgres'
import { createOrganization, createUser } from '../../src/projects/accounts'
import { createPersonalKeyFor } from '../../src/projects/personal-keys'
import { createProject } from '../../src/projects/repository'
import { BASE, json, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

let users = 0
/** A key of a new member of the default organization (each key its own user: the 10-key cap is per user). */
async function keyWith(sql: Sql, scopes: string[], extra: { scoped_teams?: number[]; scoped_organizations?: string[] } = {}): Promise<string> {
  const user = await createUser(sql, { email: `scoped-${++users}-${crypto.randomUUID().slice(0, 8)}@example.com` })
  return (await createPersonalKeyFor(sql, user.id, { label: 'scoped', scopes, ...extra })).value!
}

const ON = { groups: [{ properties: [], rollout_percentage: 100 }] }
let n = 0
const unique = () => `k${++n}-${crypto.randomUUID().slice(0, 6)}`

/** method, path, body, and the scope it needs (null: any key) */
const ROUTES: [string, string, (() => unknown) | null, string | null][] = [
  ['GET', '/api/projects/', null, 'project:read'],
  ['GET', '/api/projects/1/', null, 'project:read'],
  ['GET', '/api/projects/@current/', null, 'project:read'],
  ['PATCH', '/api/projects/1/reset_token/', null, 'project:write'],
  ['GET', '/api/projects/1/feature_flags/', null, 'feature_flag:read'],
  ['POST', '/api/projects/1/feature_flags/', () => ({ key: unique(), filters: ON }), 'feature_flag:write'],
  ['GET', '/api/projects/1/feature_flags/local_evaluation', null, 'feature_flag:read'],
  ['GET', `/api/feature_flag/local_evaluation?token=${PROJECT_KEY}`, null, 'feature_flag:read'],
  ['GET', '/flags/definitions', null, 'feature_flag:read'],
  ['GET', '/api/projects/1/cohorts/', null, 'cohort:read'],
  ['POST', '/api/projects/1/cohorts/', () => ({ name: unique(), filters: { properties: { type: 'AND', values: [] } } }), 'cohort:write'],
  ['GET', '/api/projects/1/insights/', null, 'insight:read'],
  ['POST', '/api/projects/1/insights/', () => ({ name: unique() }), 'insight:write'],
  ['GET', '/api/projects/1/dashboards/', null, 'dashboard:read'],
  ['POST', '/api/projects/1/dashboards/', () => ({ name: unique() }), 'dashboard:write'],
  ['GET', '/api/projects/1/experiments/', null, 'experiment:read'],
  ['POST', '/api/projects/1/experiments/', () => ({ name: unique(), feature_flag_key: unique() }), 'experiment:write'],
  ['GET', '/api/projects/1/actions/', null, 'action:read'],
  ['POST', '/api/projects/1/actions/', () => ({ name: unique(), steps: [{ event: '$pageview' }] }), 'action:write'],
  ['GET', '/api/projects/1/event_definitions/', null, 'event_definition:read'],
  ['GET', '/api/projects/1/property_definitions/', null, 'property_definition:read'],
  ['GET', '/api/projects/1/persons/', null, 'person:read'],
  ['GET', '/api/projects/1/events/', null, 'query:read'],
  ['GET', '/api/projects/1/events/values/?key=plan', null, 'query:read'],
  ['POST', '/api/projects/1/query/', () => ({ query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } }), 'query:read'],
  ['DELETE', '/api/projects/1/groups_types/4/', null, 'group:write'],
  ['GET', '/api/projects/1/groups_types/', null, 'group:read'],
  ['GET', '/api/personal_api_keys/', null, '*'],
  ['POST', '/api/personal_api_keys/', () => ({ label: 'made by a key', scopes: ['*'] }), '*'],
  ['GET', '/api/personal_api_keys/@current/', null, null],
]

describe('personal key scopes, projects, rate limits', () => {
  let stack: Stack
  let sql: Sql
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { RATE_LIMIT_API_PER_MINUTE: 0 })
    sql = stack.services.db.sql
  })
  afterAll(() => stack?.close())

  const call = (key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    stack.app.handle(
      new Request(`${BASE}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: body === undefined ? (method === 'GET' ? undefined : '{}') : JSON.stringify(body),
      }),
    )
  /** refused for its scope: 403 whose detail names the missing scope */
  const refusedForScope = async (r: Response) => {
    const body = await r.json().catch(() => ({}))
    return r.status === 403 && /scope/.test(String((body as { detail?: string }).detail))
  }

  test('route × scope: the scope it needs (or its :write) passes, any other is 403', async () => {
    const table: string[] = []
    const keys = new Map<string, string>()
    const keyFor = async (scope: string) => keys.get(scope) ?? keys.set(scope, await keyWith(sql, [scope])).get(scope)!
    for (const [method, path, body, needed] of ROUTES) {
      const granting = needed === null ? ['annotation:read'] : needed === '*' ? ['*'] : [needed, ...(needed.endsWith(':read') ? [needed.replace(':read', ':write')] : [])]
      const denying = needed === null ? [] : needed === '*' ? ['feature_flag:write', 'project:write'] : ['annotation:read', needed.startsWith('feature_flag') ? 'cohort:write' : 'feature_flag:write']
      for (const scope of granting) {
        const r = await call(await keyFor(scope), method, path, body?.())
        expect({ method, path, scope, refused: await refusedForScope(r), status: r.status < 500 }).toEqual({ method, path, scope, refused: false, status: true })
      }
      for (const scope of denying) {
        const r = await call(await keyFor(scope), method, path, body?.())
        expect({ method, path, scope, refused: await refusedForScope(r) }).toEqual({ method, path, scope, refused: true })
      }
      table.push(`${method.padEnd(6)} ${path.padEnd(58)} ${needed ?? '(any key)'}`)
    }
    // the figure for the report
    console.log(`route × scope\n${table.join('\n')}`)
  })

  test('an experiment\'s results through the query API need experiment:read, as on /experiments/:id/results/', async () => {
    const query = { query: { kind: 'ExperimentQuery', experiment_id: 999_999 } }
    const queryOnly = await keyWith(sql, ['query:read'])
    const refused = await call(queryOnly, 'POST', '/api/projects/1/query/', query)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({ code: 'permission_denied', detail: "API key missing required scope 'experiment:read'" })
    // with both scopes the request reaches the experiment (none with that id: 404), and HogQL still needs only query:read
    const both = await keyWith(sql, ['query:read', 'experiment:read'])
    expect((await call(both, 'POST', '/api/projects/1/query/', query)).status).toBe(404)
    expect((await call(queryOnly, 'POST', '/api/projects/1/query/', { query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } })).status).toBe(200)
  })

  test('a read-only flag key cannot create flags, keys, reset the token, revoke or roll a sibling key', async () => {
    const user = await createUser(sql, { email: `reader-${crypto.randomUUID().slice(0, 8)}@example.com` })
    const reader = (await createPersonalKeyFor(sql, user.id, { label: 'reader', scopes: ['feature_flag:read'] })).value!
    const sibling = await createPersonalKeyFor(sql, user.id, { label: 'sibling', scopes: ['*'] })
    for (const [method, path, body] of [
      ['POST', '/api/projects/1/feature_flags/', { key: 'by-reader', filters: ON }],
      ['POST', '/api/personal_api_keys/', { label: 'escalate', scopes: ['*'] }],
      ['PATCH', '/api/projects/1/reset_token/', undefined],
      ['DELETE', `/api/personal_api_keys/${sibling.id}/`, undefined],
      ['POST', `/api/personal_api_keys/${sibling.id}/roll/`, undefined],
    ] as const) {
      expect({ method, path, status: (await call(reader, method, path, body)).status }).toEqual({ method, path, status: 403 })
    }
    expect((await call(sibling.value!, 'GET', '/api/projects/1/')).status).toBe(200)
  })

  test('public endpoints with a personal key: /flags needs feature_flag:read, capture needs *', async () => {
    const reader = await keyWith(sql, ['feature_flag:read'])
    const other = await keyWith(sql, ['cohort:read'])
    const all = await keyWith(sql, ['*'])
    const flags = (key: string) => stack.app.handle(new Request(`${BASE}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ api_key: key, project_id: 1, distinct_id: 'd' }) }))
    const capture = (key: string) => stack.app.handle(new Request(`${BASE}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: key, project_id: 1, event: 'e', distinct_id: 'd' }) }))
    expect((await flags(reader)).status).toBe(200)
    expect((await flags(other)).status).toBe(403)
    expect((await capture(reader)).status).toBe(403)
    expect((await capture(all)).status).toBe(200)
  })

  test('scoped_teams and scoped_organizations: validated on create, and no other project is reached', async () => {
    const org = await createOrganization(sql, { name: 'Elsewhere' })
    const second = await createProject(sql, { name: 'Second project' })
    const user = await createUser(sql, { email: `teams-${crypto.randomUUID().slice(0, 8)}@example.com` })
    await expect(createPersonalKeyFor(sql, user.id, { label: 'x', scopes: ['*'], scoped_teams: [999_999] })).rejects.toMatchObject({ status: 400, attr: 'scoped_teams' })
    await expect(createPersonalKeyFor(sql, user.id, { label: 'x', scopes: ['*'], scoped_organizations: [org.id] })).rejects.toMatchObject({ status: 400, attr: 'scoped_organizations' })
    const onlyFirst = (await createPersonalKeyFor(sql, user.id, { label: 'first only', scopes: ['*'], scoped_teams: [1] })).value!
    expect((await call(onlyFirst, 'GET', '/api/projects/1/feature_flags/')).status).toBe(200)
    const other = await call(onlyFirst, 'GET', `/api/projects/${second.id}/feature_flags/`)
    expect(other.status).toBe(403)
    expect(((await other.json()) as { detail: string }).detail).toBe(`API key does not have access to the requested project: ID ${second.id}.`)
    for (const list of ['insights', 'dashboards']) expect((await call(onlyFirst, 'GET', `/api/projects/${second.id}/${list}/`)).status).toBe(403)
    // a project created behind the server's back: its token is known after the token cache's next reload on a miss
    let byToken = 401
    for (let i = 0; i < 40 && byToken === 401; i++) {
      byToken = (await call(onlyFirst, 'GET', `/api/feature_flag/local_evaluation?token=${second.api_token}`)).status
      if (byToken === 401) await Bun.sleep(100)
    }
    expect(byToken).toBe(403)
    const listed = await json(call(onlyFirst, 'GET', '/api/projects/'))
    expect(listed.results.map((p: { id: number }) => p.id)).toEqual([1])
    // capture with the key and the other project's id is refused too
    const capture = await stack.app.handle(
      new Request(`${BASE}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: onlyFirst, project_id: second.id, event: 'e', distinct_id: 'd' }) }),
    )
    expect(capture.status).toBe(403)
    // through the API: an unknown team is a 400, never accepted and ignored
    const admin = await keyWith(sql, ['*'])
    const refused = await call(admin, 'POST', '/api/personal_api_keys/', { label: 'bad', scopes: ['*'], scoped_teams: [424242] })
    expect(refused.status).toBe(400)
  })

  test('@current follows a user moved to another organization', async () => {
    const org = await createOrganization(sql, { name: 'New home' })
    const home = await createProject(sql, { name: 'New home project', organizationId: org.id })
    const user = await createUser(sql, { email: `mover-${crypto.randomUUID().slice(0, 8)}@example.com` })
    const key = (await createPersonalKeyFor(sql, user.id, { label: 'mover', scopes: ['*'] })).value!
    expect((await json(call(key, 'GET', '/api/projects/@current/'))).id).toBe(1)
    await sql`delete from organization_members where user_id = ${user.id}`
    await sql`insert into organization_members (organization_id, user_id, level) values (${org.id}, ${user.id}, 1)`
    const listed = await json(call(key, 'GET', '/api/projects/'))
    expect(listed.results.map((p: { id: number }) => p.id)).toEqual([home.id])
    const current = await call(key, 'GET', '/api/projects/@current/')
    expect(current.status).toBe(200)
    expect(((await current.json()) as { id: number }).id).toBe(home.id)
  })
})

describe('rate limits and throttles behind a proxy', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { RATE_LIMIT_API_PER_MINUTE: 5, TRUST_PROXY: true, UNKNOWN_KEY_LOOKUPS_PER_MINUTE: 3 })
  })
  afterAll(() => stack?.close())
  const get = (key: string, forwardedFor = '203.0.113.1') =>
    stack.app.handle(new Request(`${BASE}/api/projects/1/`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': forwardedFor } }))

  test('the private API limit counts per user: three keys of one user share five requests a minute', async () => {
    const sql = stack.services.db.sql
    const user = await createUser(sql, { email: `rotator-${crypto.randomUUID().slice(0, 8)}@example.com` })
    const keys = await Promise.all([1, 2, 3].map((i) => createPersonalKeyFor(sql, user.id, { label: `k${i}`, scopes: ['*'] }).then((k) => k.value!)))
    const statuses: number[] = []
    for (let i = 0; i < 15; i++) statuses.push((await get(keys[i % 3])).status)
    expect(statuses.filter((s) => s === 200).length).toBe(5)
    expect(statuses.filter((s) => s === 429).length).toBe(10)
  })

  test('unknown keys are throttled by the address the proxy saw, not by the first (client-written) entry', async () => {
    const sql = stack.services.db.sql
    const statuses: number[] = []
    // the attacker writes a new first entry each time; the proxy appends the address it saw
    for (let i = 0; i < 8; i++) statuses.push((await get(`phx_bogus_key_number_${i}_${'x'.repeat(20)}`, `10.9.8.${i}, 198.51.100.66`)).status)
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401])
    expect(statuses.slice(4)).toEqual([429, 429, 429, 429])
    // someone else, with a key never seen before, is not caught in the attacker's bucket
    const user = await createUser(sql, { email: `bystander-${crypto.randomUUID().slice(0, 8)}@example.com` })
    const fresh = (await createPersonalKeyFor(sql, user.id, { label: 'new', scopes: ['*'] })).value!
    expect((await get(fresh, '198.51.100.77')).status).toBe(200)
  })

  test('on public endpoints too (a personal key with project_id): one address cannot lock another out', async () => {
    const sql = stack.services.db.sql
    const decide = (key: string, forwardedFor: string) =>
      stack.app.handle(
        new Request(`${BASE}/flags/?v=2`, { method: 'POST', headers: { 'x-forwarded-for': forwardedFor }, body: JSON.stringify({ api_key: key, project_id: 1, distinct_id: 'd' }) }),
      )
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) statuses.push((await decide(`phx_public_bogus_${i}_${'y'.repeat(20)}`, '192.0.2.50')).status)
    expect(statuses.slice(4).every((s) => s === 429)).toBe(true)
    const user = await createUser(sql, { email: `public-${crypto.randomUUID().slice(0, 8)}@example.com` })
    const fresh = (await createPersonalKeyFor(sql, user.id, { label: 'new', scopes: ['*'] })).value!
    expect((await decide(fresh, '192.0.2.51')).status).toBe(200)
  })
})
