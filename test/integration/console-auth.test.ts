// Console sign-in through HTTP: login, logout, @me, the session cookie beside Bearer keys, the CSRF rule, the
// sign-in throttle, idle expiry, a password change ending sessions, and two organizations that see only their own.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { createOrganization } from '../../src/projects/accounts'
import { applyInitAdmin, createUser, setPassword } from '../../src/users/service'
import { BASE, json, PERSONAL_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const ADMIN = 'Admin@Example.com'
const PASSWORD = 'correct horse battery'

interface Session {
  cookie: string
  csrf: string
  setCookies: string[]
}

describe.each(['embedded', 'real'] as StoreChoice[])('console sign-in (%s Postgres)', (postgres) => {
  let stack: Stack
  const handle = (path: string, init: RequestInit & { json?: unknown; base?: string } = {}) => {
    const headers = new Headers(init.headers)
    let body = init.body
    if (init.json !== undefined) {
      body = JSON.stringify(init.json)
      headers.set('content-type', 'application/json')
    }
    return stack.app.handle(new Request(`${BASE}${path}`, { ...init, headers, body }))
  }
  const login = (email: string, password: string, headers: Record<string, string> = {}) =>
    handle('/api/login/', { method: 'POST', json: { email, password }, headers })
  const signIn = async (email = ADMIN, password = PASSWORD): Promise<Session> => {
    const r = await login(email, password)
    expect(r.status).toBe(200)
    const setCookies = r.headers.getSetCookie()
    const value = (name: string) => setCookies.find((c) => c.startsWith(`${name}=`))!.split(';')[0].split('=')[1]
    return { cookie: `phog_session=${value('phog_session')}; phog_csrftoken=${value('phog_csrftoken')}`, csrf: value('phog_csrftoken'), setCookies }
  }
  const withCookie = (s: Session, extra: Record<string, string> = {}) => ({ cookie: s.cookie, ...extra })

  beforeAll(async () => {
    stack = await startStack({ postgres, clickhouse: 'embedded' }, { INIT_ADMIN_EMAIL: ADMIN, INIT_ADMIN_PASSWORD: PASSWORD })
  })
  afterAll(async () => {
    await stack?.close()
  })

  test('a wrong password or unknown email: 401 "Invalid email or password."; a bad body: 400', async () => {
    for (const [email, password] of [[ADMIN, 'wrong password'], ['nobody@example.com', PASSWORD]]) {
      const r = await login(email, password, { 'x-forwarded-for': '198.51.100.1' })
      expect(r.status).toBe(401)
      const body = await json(r)
      expect(body.detail).toBe('Invalid email or password.')
      expect(r.headers.getSetCookie()).toEqual([])
    }
    expect((await handle('/api/login/', { method: 'POST', json: { email: ADMIN } })).status).toBe(400)
  })

  test('sign-in sets an HttpOnly SameSite=Lax session cookie and a readable CSRF cookie; @me answers who it is', async () => {
    const s = await signIn()
    const session = s.setCookies.find((c) => c.startsWith('phog_session='))!
    expect(session).toContain('HttpOnly')
    expect(session).toContain('SameSite=Lax')
    expect(session).not.toContain('Secure')
    expect(s.setCookies.find((c) => c.startsWith('phog_csrftoken='))).not.toContain('HttpOnly')
    const me = await json(handle('/api/users/@me/', { headers: withCookie(s) }))
    expect(me.email).toBe(ADMIN.toLowerCase())
    expect(me.organization.name).toBe('Default organization')
    expect(me.projects.map((p: { id: number }) => p.id)).toEqual([1])
    // only a hash is stored
    const rows = await stack.services.db.sql`select token_hash from user_sessions`
    expect(rows.every((r) => r.token_hash.startsWith('sha256$') && !s.cookie.includes(r.token_hash.slice(7)))).toBe(true)
  })

  test('behind https the session cookie is Secure', async () => {
    const r = await login(ADMIN, PASSWORD, { 'x-forwarded-proto': 'https' })
    expect(r.status).toBe(200)
    for (const c of r.headers.getSetCookie()) expect(c).toContain('; Secure')
  })

  test('the private API accepts the cookie as it accepts a Bearer key', async () => {
    const s = await signIn()
    for (const path of ['/api/projects/', '/api/projects/@current/', '/api/projects/1/feature_flags/', '/api/projects/1/events/?limit=1']) {
      const byCookie = await handle(path, { headers: withCookie(s) })
      const byKey = await handle(path, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })
      expect(byCookie.status).toBe(200)
      expect(byKey.status).toBe(200)
    }
    expect((await handle('/api/projects/', {})).status).toBe(401)
    expect((await handle('/api/projects/', { headers: { cookie: 'phog_session=' + 'A'.repeat(43) } })).status).toBe(401)
  })

  test('another origin may call the private API but is never allowed credentials (the cookie cannot read for it)', async () => {
    const s = await signIn()
    const r = await handle('/api/users/@me/', { headers: withCookie(s, { origin: 'https://sibling.example.com' }) })
    expect(r.headers.get('access-control-allow-origin')).toBe('https://sibling.example.com')
    expect(r.headers.get('access-control-allow-credentials')).toBeNull()
    const preflight = await handle('/api/projects/1/feature_flags/', {
      method: 'OPTIONS',
      headers: { origin: 'https://sibling.example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'x-csrftoken, content-type' },
    })
    expect(preflight.headers.get('access-control-allow-credentials')).toBeNull()
  })

  test('personal keys through a session: @current names no key (404), the user’s keys are listed and made', async () => {
    const s = await signIn()
    const writes = withCookie(s, { 'x-csrftoken': s.csrf })
    expect((await handle('/api/personal_api_keys/@current/', { headers: withCookie(s) })).status).toBe(404)
    expect((await handle('/api/personal_api_keys/@current/roll/', { method: 'POST', headers: writes })).status).toBe(404)
    expect((await handle('/api/personal_api_keys/@current/', { method: 'DELETE', headers: writes })).status).toBe(404)
    const created = await handle('/api/personal_api_keys/', { method: 'POST', json: { label: `session-${postgres}`, scopes: ['*'] }, headers: writes })
    expect(created.status).toBe(201)
    const listed = await json(handle('/api/personal_api_keys/', { headers: withCookie(s) }))
    expect(listed.map((k: { label: string }) => k.label)).toContain(`session-${postgres}`)
  })

  test('a cookie-authenticated write needs X-CSRFToken equal to the cookie: 403 csrf_failed otherwise', async () => {
    const s = await signIn()
    const flag = { key: `csrf-${postgres}`, filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }
    const refusals: Record<string, string>[] = [
      {},
      { 'x-csrftoken': 'A'.repeat(43) },
      { 'x-csrftoken': '' },
    ]
    for (const extra of refusals) {
      const r = await handle('/api/projects/1/feature_flags/', { method: 'POST', json: flag, headers: withCookie(s, extra) })
      expect(r.status).toBe(403)
      expect((await json(r)).code).toBe('csrf_failed')
    }
    // a body sent without a JSON content type (a cross-site form's shape) is refused the same way
    const form = await handle('/api/projects/1/reset_token/', { method: 'PATCH', headers: withCookie(s) })
    expect(form.status).toBe(403)
    const created = await handle('/api/projects/1/feature_flags/', { method: 'POST', json: flag, headers: withCookie(s, { 'x-csrftoken': s.csrf }) })
    expect(created.status).toBe(201)
    // a Bearer key needs no CSRF token: no browser sends it by itself
    const byKey = await handle('/api/projects/1/feature_flags/', { method: 'POST', json: { ...flag, key: `${flag.key}-key` }, headers: { authorization: `Bearer ${PERSONAL_KEY}` } })
    expect(byKey.status).toBe(201)
    // a CSRF cookie from another session is not this session's
    const other = await signIn()
    const mixed = await handle('/api/projects/1/feature_flags/', {
      method: 'POST',
      json: { ...flag, key: `${flag.key}-mixed` },
      headers: { cookie: `phog_session=${s.cookie.split(';')[0].split('=')[1]}; phog_csrftoken=${other.csrf}`, 'x-csrftoken': other.csrf },
    })
    expect(mixed.status).toBe(403)
  })

  test('logout ends the session (and needs the CSRF token); the old cookie is refused after', async () => {
    const s = await signIn()
    expect((await handle('/api/logout/', { method: 'POST', headers: withCookie(s) })).status).toBe(403)
    const out = await handle('/api/logout/', { method: 'POST', headers: withCookie(s, { 'x-csrftoken': s.csrf }) })
    expect(out.status).toBe(200)
    expect(out.headers.getSetCookie().some((c) => c.startsWith('phog_session=;') && c.includes('Max-Age=0'))).toBe(true)
    const after = await handle('/api/users/@me/', { headers: withCookie(s) })
    expect(after.status).toBe(401)
  })

  test('a session idle for 14 days is over', async () => {
    const s = await signIn()
    await stack.services.db.sql`update user_sessions set last_seen_at = now() - interval '15 days'`
    expect((await handle('/api/users/@me/', { headers: withCookie(s) })).status).toBe(401)
  })

  test('two organizations: each user sees only their own organization and projects', async () => {
    const sql = stack.services.db.sql
    const org = await createOrganization(sql, { name: `Other ${postgres}` })
    const project = await createProject(sql, { name: 'Other project', organizationId: org.id })
    const email = `second-${postgres}@example.com`
    await createUser(sql, { email, password: 'another password', organizationId: org.id })
    const second = await signIn(email, 'another password')
    const me = await json(handle('/api/users/@me/', { headers: withCookie(second) }))
    expect(me.organization.id).toBe(org.id)
    expect(me.organization.membership_level).toBe(15)
    expect(me.projects.map((p: { id: number }) => p.id)).toEqual([project.id])
    const listed = await json(handle('/api/projects/', { headers: withCookie(second) }))
    expect(listed.results.map((p: { id: number }) => p.id)).toEqual([project.id])
    expect((await handle('/api/projects/1/', { headers: withCookie(second) })).status).toBe(404)
    expect((await handle('/api/projects/1/feature_flags/', { headers: withCookie(second) })).status).toBe(404)
    const admin = await signIn()
    expect((await handle(`/api/projects/${project.id}/`, { headers: withCookie(admin) })).status).toBe(404)
    const adminMe = await json(handle('/api/users/@me/', { headers: withCookie(admin) }))
    expect(adminMe.projects.map((p: { id: number }) => p.id)).toEqual([1])
  })

  test('a password change ends every session of the user; INIT_ADMIN_* are applied once', async () => {
    const sql = stack.services.db.sql
    const email = `changer-${postgres}@example.com`
    await createUser(sql, { email, password: 'first password' })
    const s = await signIn(email, 'first password')
    await setPassword(sql, email, 'second password')
    expect((await handle('/api/users/@me/', { headers: withCookie(s) })).status).toBe(401)
    expect((await login(email, 'first password')).status).toBe(401)
    await signIn(email, 'second password')
    // a second boot with the same INIT_ADMIN_* does not undo a password changed since
    await setPassword(sql, ADMIN, 'changed admin password')
    expect(await applyInitAdmin(sql, ADMIN, PASSWORD)).toBe(false)
    await signIn(ADMIN, 'changed admin password')
    await setPassword(sql, ADMIN, PASSWORD)
  })

  test('after 10 failed sign-ins for one email in 15 minutes: 429 throttled, even with the right password', async () => {
    const email = `throttled-${postgres}@example.com`
    await createUser(stack.services.db.sql, { email, password: 'the right one' })
    for (let i = 0; i < 10; i++) expect((await login(email, 'wrong password', { 'x-forwarded-for': `203.0.113.${i}` })).status).toBe(401)
    const r = await login(email, 'the right one')
    expect(r.status).toBe(429)
    expect((await json(r)).code).toBe('throttled')
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
    // another email is not slowed by it
    await signIn()
  })
})
