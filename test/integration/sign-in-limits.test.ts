// Keys and sign-in within their limits, attacked over HTTP (a listening server) on the embedded and a real Postgres:
// a limited key makes no wider key and manages no other key, @me shows a limited key only what it reaches; 60
// concurrent wrong passwords get at most 10 password checks (also split across two services on one Postgres); the
// sign-in body is JSON only, capped and budgeted however it is framed; browser writes from another origin are
// refused (behind a proxy too).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Sql } from 'postgres'
import { createApp } from '../../src/app'
import { createUser as createMember } from '../../src/projects/accounts'
import { createPersonalKeyFor } from '../../src/projects/personal-keys'
import { createProject, defaultOrganizationId } from '../../src/projects/repository'
import { createMetrics } from '../../src/ops/metrics'
import { silentLogger } from '../../src/log'
import { startServices } from '../../src/services'
import { createUser } from '../../src/users/service'
import { json, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const PASSWORD = 'correct horse battery'
let addresses = 0
/** Each test its own client address (TRUST_PROXY: the X-Forwarded-For entry), so per-address counts stay apart. */
const nextAddress = () => `198.51.100.${++addresses}`

type Listening = { url: string; stop(): void }

function listen(app: Stack['app']): Listening {
  const server = app.listen({ port: 0, hostname: '127.0.0.1' })
  return { url: `http://127.0.0.1:${server.server!.port}`, stop: () => void server.stop(true) }
}

async function metricValue(url: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`))
  return line ? Number(line.split(' ').pop()) : 0
}

describe.each(['embedded', 'real'] as StoreChoice[])('keys and sign-in within their limits (%s Postgres)', (postgres) => {
  let stack: Stack
  let server: Listening
  let sql: Sql
  const call = (path: string, init: RequestInit & { json?: unknown; key?: string; from?: string } = {}) => {
    const headers = new Headers(init.headers)
    if (init.key) headers.set('authorization', `Bearer ${init.key}`)
    headers.set('x-forwarded-for', init.from ?? '192.0.2.200')
    let body = init.body
    if (init.json !== undefined) {
      body = JSON.stringify(init.json)
      headers.set('content-type', 'application/json')
    }
    return fetch(`${server.url}${path}`, { ...init, headers, body })
  }
  const login = (email: string, password: string, headers: Record<string, string> = {}, from = nextAddress()) =>
    call('/api/login/', { method: 'POST', json: { email, password }, headers, from })
  const cookiesOf = (r: Response) => {
    const value = (name: string) => r.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))!.split(';')[0].split('=')[1]
    return { cookie: `phog_session=${value('phog_session')}; phog_csrftoken=${value('phog_csrftoken')}`, csrf: value('phog_csrftoken') }
  }
  const newEmail = (what: string) => `${what}-${postgres}-${crypto.randomUUID().slice(0, 8)}@example.com`

  beforeAll(async () => {
    stack = await startStack({ postgres, clickhouse: 'embedded' }, { TRUST_PROXY: true, RATE_LIMIT_API_PER_MINUTE: 0 })
    sql = stack.services.db.sql
    server = listen(stack.app)
  })
  afterAll(async () => {
    server?.stop()
    await stack?.close()
  })

  describe('a limited key', () => {
    let limited: string
    let unrestricted: { id: string; value: string }
    let otherProject: number
    beforeAll(async () => {
      const user = await createMember(sql, { email: newEmail('keys') })
      otherProject = (await createProject(sql, { name: 'second', organizationId: await defaultOrganizationId(sql) })).id
      limited = (await createPersonalKeyFor(sql, user.id, { label: 'project one', scopes: ['*'], scoped_teams: [1] })).value!
      const made = await createPersonalKeyFor(sql, user.id, { label: 'everything', scopes: ['*'] })
      unrestricted = { id: made.id, value: made.value! }
    })

    test('creates keys only within its own limits; left out, they are inherited', async () => {
      const refused = [{ scoped_teams: null }, { scoped_teams: [] }, { scoped_teams: [1, otherProject] }, { scoped_teams: [otherProject] }]
      for (const limits of refused) {
        const r = await call('/api/personal_api_keys/', { method: 'POST', key: limited, json: { label: 'wider', scopes: ['*'], ...limits } })
        const body = await json(r)
        expect(r.status).toBe(403)
        expect(body.detail).toMatch(/project|wider/)
      }
      const inherited = await call('/api/personal_api_keys/', { method: 'POST', key: limited, json: { label: 'inherits', scopes: ['feature_flag:read'] } })
      expect(inherited.status).toBe(201)
      const child = await json(inherited)
      expect(child.scoped_teams).toEqual([1])
      // the child reaches project 1 and nothing else
      expect((await call('/api/projects/1/feature_flags/', { key: child.value })).status).toBe(200)
      expect((await call(`/api/projects/${otherProject}/feature_flags/`, { key: child.value })).status).toBe(403)
      // a scope-limited child cannot make keys at all (managing keys needs *)
      const grandchild = await call('/api/personal_api_keys/', { method: 'POST', key: child.value, json: { label: 'gc', scopes: ['*'] } })
      expect(grandchild.status).toBe(403)
    })

    test('rolls and revokes only itself; the other key keeps working', async () => {
      const roll = await call(`/api/personal_api_keys/${unrestricted.id}/roll/`, { method: 'POST', key: limited })
      expect(roll.status).toBe(403)
      expect((await json(roll)).value).toBeUndefined()
      expect((await call(`/api/personal_api_keys/${unrestricted.id}/`, { method: 'DELETE', key: limited })).status).toBe(403)
      expect((await call('/api/projects/', { key: unrestricted.value })).status).toBe(200)
      const self = await call('/api/personal_api_keys/@current/roll/', { method: 'POST', key: limited })
      expect(self.status).toBe(200)
      limited = (await json(self)).value
      // an unrestricted key of the same user may roll another
      const byOwner = await call(`/api/personal_api_keys/${unrestricted.id}/roll/`, { method: 'POST', key: unrestricted.value })
      expect(byOwner.status).toBe(200)
      unrestricted.value = (await json(byOwner)).value
    })

    test('@me lists only the projects and organizations it can use', async () => {
      const byLimited = await json(call('/api/users/@me/', { key: limited }))
      expect(byLimited.projects.map((p: { id: number }) => p.id)).toEqual([1])
      expect(byLimited.organizations).toHaveLength(1)
      const byOwner = await json(call('/api/users/@me/', { key: unrestricted.value }))
      expect(byOwner.projects.map((p: { id: number }) => p.id)).toEqual([1, otherProject])
    })
  })

  test('60 concurrent wrong passwords for one email: at most 10 are checked, the rest 429 throttled', async () => {
    const email = newEmail('guessed')
    await createUser(sql, { email, password: PASSWORD })
    const checksBefore = await metricValue(server.url, 'login_attempts_total', 'outcome="wrong_password"')
    const started = performance.now()
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => login(email, `wrong guess ${i}`)))
    const statuses = answers.map((r) => r.status)
    const checks = (await metricValue(server.url, 'login_attempts_total', 'outcome="wrong_password"')) - checksBefore
    console.log(`[${postgres}] 60 concurrent wrong passwords: ${statuses.filter((s) => s === 401).length}×401, ${statuses.filter((s) => s === 429).length}×429, ${checks} password checks, ${Math.round(performance.now() - started)} ms`)
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(50)
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true)
    expect(checks).toBeLessThanOrEqual(10)
    const refused = answers.find((r) => r.status === 429)!
    expect((await json(refused)).code).toBe('throttled')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    // even the right password waits now
    expect((await login(email, PASSWORD)).status).toBe(429)
  })

  test('right passwords give their attempt back: a user signing in often is never throttled', async () => {
    const email = newEmail('regular')
    await createUser(sql, { email, password: PASSWORD })
    for (let i = 0; i < 3; i++) expect((await login(email, 'a wrong one')).status).toBe(401)
    for (let i = 0; i < 15; i++) expect((await login(email, PASSWORD)).status).toBe(200)
  })

  test('one address trying many emails is limited too (50 checks in the window)', async () => {
    const from = nextAddress()
    const answers = await Promise.all(Array.from({ length: 70 }, (_, i) => login(`nobody-${i}-${postgres}@example.com`, 'a guess', {}, from)))
    const statuses = answers.map((r) => r.status)
    console.log(`[${postgres}] 70 emails from one address: ${statuses.filter((s) => s === 401).length}×401, ${statuses.filter((s) => s === 429).length}×429`)
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(50)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(20)
  })

  test.skipIf(postgres !== 'real')('two services on one Postgres share the count: 60 concurrent guesses split between them, at most 10 checked', async () => {
    const second = await startServices(stack.config, silentLogger, { metrics: createMetrics() })
    const otherServer = listen(createApp(second))
    try {
      const email = newEmail('shared')
      await createUser(sql, { email, password: PASSWORD })
      const answers = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          fetch(`${i % 2 ? otherServer.url : server.url}/api/login/`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': nextAddress() },
            body: JSON.stringify({ email, password: `wrong ${i}` }),
          }),
        ),
      )
      const checked = answers.filter((r) => r.status === 401).length
      console.log(`[${postgres}] two services: ${checked}×401 of 60`)
      expect(checked).toBeLessThanOrEqual(10)
      expect(answers.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(50)
    } finally {
      otherServer.stop()
      await second.close()
    }
  })

  test('sign-in takes JSON only: a form body (what another site can post) is 415, never a session', async () => {
    const email = newEmail('form')
    await createUser(sql, { email, password: PASSWORD })
    const form = new URLSearchParams({ email, password: PASSWORD }).toString()
    for (const type of ['application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=x', null]) {
      const headers: Record<string, string> = { 'x-forwarded-for': nextAddress() }
      if (type) headers['content-type'] = type
      const r = await fetch(`${server.url}/api/login/`, { method: 'POST', headers, body: type === 'text/plain' ? JSON.stringify({ email, password: PASSWORD }) : form })
      expect(r.status).toBe(415)
      expect((await json(r)).code).toBe('unsupported_media_type')
      expect(r.headers.getSetCookie()).toEqual([])
    }
  })

  test('a chunked sign-in body is read within its cap (64 KiB): 70 MB is refused with 413, not parsed', async () => {
    let pulled = 0
    const chunk = new TextEncoder().encode(`{"email": "${'a'.repeat(64 * 1024)}`)
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled++ >= 1100) return controller.close()
        controller.enqueue(pulled === 1 ? chunk : chunk.subarray(12))
      },
    })
    const rssBefore = process.memoryUsage.rss()
    const started = performance.now()
    const r = await fetch(`${server.url}/api/login/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': nextAddress() },
      body,
      duplex: 'half',
    } as RequestInit)
    const grewMb = (process.memoryUsage.rss() - rssBefore) / 1e6
    console.log(`[${postgres}] 70 MB chunked sign-in body: ${r.status} in ${Math.round(performance.now() - started)} ms, ${pulled} chunks of 64 KiB pulled, RSS +${grewMb.toFixed(1)} MB`)
    expect(r.status).toBe(413)
    expect((await json(r)).code).toBe('request_too_large')
    expect(grewMb).toBeLessThan(300)
    // small but hostile: nested past the JSON budget, or not an object
    for (const text of ['['.repeat(60_000), '[1,2]', '{"email": 5, "password": "x"}']) {
      const bad = await fetch(`${server.url}/api/login/`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': nextAddress() }, body: text })
      expect(bad.status).toBe(400)
    }
  })

  describe('browser writes come from this server’s own pages', () => {
    const evil = 'https://evil.example'
    test('sign-in from another origin (login CSRF) is 403 csrf_failed; own origin, or no Origin at all (curl), signs in', async () => {
      const email = newEmail('csrf')
      await createUser(sql, { email, password: PASSWORD })
      for (const headers of [{ origin: evil }, { origin: 'null' }, { referer: `${evil}/page` }, { origin: evil, referer: `${server.url}/console/` }] as Record<string, string>[]) {
        const r = await login(email, PASSWORD, headers)
        expect(r.status).toBe(403)
        expect((await json(r)).code).toBe('csrf_failed')
        expect(r.headers.getSetCookie()).toEqual([])
      }
      for (const headers of [{ origin: server.url }, { referer: `${server.url}/console/login` }, {}] as Record<string, string>[]) expect((await login(email, PASSWORD, headers)).status).toBe(200)
    })

    test('behind a proxy (TRUST_PROXY): the origin is the one X-Forwarded-Host and -Proto name', async () => {
      const email = newEmail('proxied')
      await createUser(sql, { email, password: PASSWORD })
      const proxied = { 'x-forwarded-host': 'phog.example.com', 'x-forwarded-proto': 'https' }
      const r = await login(email, PASSWORD, { ...proxied, origin: 'https://phog.example.com' })
      expect(r.status).toBe(200)
      expect(r.headers.getSetCookie().every((c) => c.includes('; Secure'))).toBe(true)
      expect((await login(email, PASSWORD, { ...proxied, origin: server.url })).status).toBe(403)
      expect((await login(email, PASSWORD, { ...proxied, origin: 'http://phog.example.com' })).status).toBe(403)
    })

    test('cookie-authenticated writes and sign-out from another origin: 403 csrf_failed, even with the CSRF token', async () => {
      const email = newEmail('session')
      const user = await createUser(sql, { email, password: PASSWORD })
      await sql`update organization_members set level = 15 where user_id = ${user.id}`
      const s = cookiesOf(await login(email, PASSWORD))
      const flag = (key: string) => ({ key, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
      const write = (origin: string, key: string) =>
        call('/api/projects/1/feature_flags/', { method: 'POST', json: flag(key), headers: { cookie: s.cookie, 'x-csrftoken': s.csrf, origin } })
      const foreign = await write(evil, `evil-${postgres}`)
      expect(foreign.status).toBe(403)
      expect((await json(foreign)).code).toBe('csrf_failed')
      expect((await write(server.url, `own-${postgres}`)).status).toBe(201)
      const out = await call('/api/logout/', { method: 'POST', headers: { cookie: s.cookie, 'x-csrftoken': s.csrf, origin: evil } })
      expect(out.status).toBe(403)
      expect((await call('/api/users/@me/', { headers: { cookie: s.cookie } })).status).toBe(200)
      const text = await (await fetch(`${server.url}/metrics`)).text()
      expect(Number(/^csrf_origin_refused_total (\d+)/m.exec(text)?.[1])).toBeGreaterThanOrEqual(2)
    })
  })
})
