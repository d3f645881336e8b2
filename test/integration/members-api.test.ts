// Organization members through HTTP, signed in as the console does (cookie + X-CSRFToken): the owner lists, adds a
// new user with a first password, changes a level and removes a member; a non-owner is refused; the organization
// always keeps an owner; a key needs the organization_member scope and reaches only its own organization.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createOrganization } from '../../src/projects/accounts'
import { BASE, json, PERSONAL_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const OWNER_EMAIL = 'owner@example.com'
const PASSWORD = 'correct horse battery'
const MEMBERS = '/api/organizations/@current/members/'

interface Session {
  cookie: string
  csrf: string
}

describe.each(['embedded', 'real'] as StoreChoice[])('organization members (%s Postgres)', (postgres) => {
  let stack: Stack
  const handle = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const headers = new Headers(init.headers)
    let body = init.body
    if (init.json !== undefined) {
      body = JSON.stringify(init.json)
      headers.set('content-type', 'application/json')
    }
    return stack.app.handle(new Request(`${BASE}${path}`, { ...init, headers, body }))
  }
  const signIn = async (email: string, password: string): Promise<Session> => {
    const r = await handle('/api/login/', { method: 'POST', json: { email, password } })
    expect(r.status).toBe(200)
    const value = (name: string) => r.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))!.split(';')[0].split('=')[1]
    return { cookie: `phog_session=${value('phog_session')}; phog_csrftoken=${value('phog_csrftoken')}`, csrf: value('phog_csrftoken') }
  }
  const as = (s: Session, method = 'GET', body?: unknown) =>
    ({ method, headers: { cookie: s.cookie, 'x-csrftoken': s.csrf }, ...(body === undefined ? {} : { json: body }) }) as RequestInit & { json?: unknown }
  const emailsOf = (page: { results: { user: { email: string }; level: number }[] }) => page.results.map((m) => [m.user.email, m.level])

  beforeAll(async () => {
    stack = await startStack({ postgres, clickhouse: 'embedded' }, { INIT_ADMIN_EMAIL: OWNER_EMAIL, INIT_ADMIN_PASSWORD: PASSWORD })
  })
  afterAll(async () => {
    await stack?.close()
  })

  test('the owner lists, adds a new user with a first password, who signs in as a member and may not manage members', async () => {
    const owner = await signIn(OWNER_EMAIL, PASSWORD)
    const listed = await json(handle(MEMBERS, as(owner)))
    expect(listed.count).toBe(1)
    expect(listed.results[0]).toMatchObject({ level: 15, can_sign_in: true, user: { email: OWNER_EMAIL } })

    const added = await handle(MEMBERS, as(owner, 'POST', { email: 'Ana@Example.com', level: 8, password: 'ana first password' }))
    expect(added.status).toBe(201)
    expect(await json(added)).toMatchObject({ level: 8, can_sign_in: true, user: { email: 'ana@example.com', first_name: 'ana' } })
    expect(emailsOf(await json(handle(MEMBERS, as(owner))))).toEqual([[OWNER_EMAIL, 15], ['ana@example.com', 8]])

    const ana = await signIn('ana@example.com', 'ana first password')
    const me = await json(handle('/api/users/@me/', as(ana)))
    expect(me.organization.membership_level).toBe(8)
    expect(me.projects.map((p: { id: number }) => p.id)).toEqual([1])
    expect((await handle(MEMBERS, as(ana))).status).toBe(200)
    const refused = await handle(MEMBERS, as(ana, 'POST', { email: 'eve@example.com', password: 'eve first password' }))
    expect(refused.status).toBe(403)
    expect((await json(refused)).detail).toBe("Only the organization's owners can add members.")
  })

  test('bad additions: 400 naming the member, nothing written', async () => {
    const owner = await signIn(OWNER_EMAIL, PASSWORD)
    const cases: [unknown, string, string][] = [
      [{ email: 'new@example.com' }, 'password', 'required'],
      [{ email: 'new@example.com', password: 'short' }, 'password', 'invalid_input'],
      [{ email: 'new@example.com', password: 'x'.repeat(2000) }, 'password', 'invalid_input'],
      [{ email: 'not an email', password: 'long enough pass' }, 'email', 'invalid_input'],
      [{ email: 'x'.repeat(300) + '@example.com', password: 'long enough pass' }, 'email', 'invalid_input'],
      [{ email: 'new@example.com', password: 'long enough pass', level: 3 }, 'level', 'invalid_choice'],
      [{ email: 'new@example.com', password: 'long enough pass', role: 'admin' }, 'role', 'invalid_input'],
      [{ email: OWNER_EMAIL }, 'email', 'unique'],
      [{ email: OWNER_EMAIL, password: 'long enough pass' }, 'password', 'invalid_input'],
    ]
    for (const [body, attr, code] of cases) {
      const r = await handle(MEMBERS, as(owner, 'POST', body))
      expect(r.status).toBe(400)
      expect(await json(r)).toMatchObject({ type: 'validation_error', attr, code })
    }
    expect((await handle(MEMBERS, as(owner, 'POST', [1, 2]))).status).toBe(400)
    const [{ n }] = await stack.services.db.sql`select count(*)::int as n from users where email = 'new@example.com'`
    expect(n).toBe(0)
  })

  test('the owner changes a level and removes a member, who loses the projects at once; the last owner stays', async () => {
    const owner = await signIn(OWNER_EMAIL, PASSWORD)
    const bo = await json(handle(MEMBERS, as(owner, 'POST', { email: 'bo@example.com', password: 'bo first password' })))
    expect(bo.level).toBe(1)
    const boSession = await signIn('bo@example.com', 'bo first password')
    expect((await handle('/api/projects/1/', as(boSession))).status).toBe(200)
    // a member cannot raise themselves
    expect((await handle(`${MEMBERS}${bo.user.uuid}/`, as(boSession, 'PATCH', { level: 15 }))).status).toBe(403)

    const promoted = await handle(`${MEMBERS}${bo.user.uuid}/`, as(owner, 'PATCH', { level: 8 }))
    expect(promoted.status).toBe(200)
    expect((await json(promoted)).level).toBe(8)
    expect((await handle(`${MEMBERS}${bo.user.uuid}/`, as(owner, 'PATCH', { level: 'owner' }))).status).toBe(400)
    expect((await handle(`${MEMBERS}00000000-0000-4000-8000-000000000000/`, as(owner, 'PATCH', { level: 8 }))).status).toBe(404)
    expect((await handle(`${MEMBERS}not-a-uuid/`, as(owner, 'DELETE'))).status).toBe(404)

    const ownerUuid = (await json(handle('/api/users/@me/', as(owner)))).uuid
    const stepDown = await handle(`${MEMBERS}${ownerUuid}/`, as(owner, 'PATCH', { level: 8 }))
    expect(stepDown.status).toBe(400)
    expect(await json(stepDown)).toMatchObject({ code: 'last_owner', attr: 'level' })
    expect((await handle(`${MEMBERS}${ownerUuid}/`, as(owner, 'DELETE'))).status).toBe(400)

    const removed = await handle(`${MEMBERS}${bo.user.uuid}/`, as(owner, 'DELETE'))
    expect(removed.status).toBe(204)
    expect((await handle('/api/projects/1/', as(boSession))).status).toBe(404)
    expect(emailsOf(await json(handle(MEMBERS, as(owner)))).map(([e]) => e)).not.toContain('bo@example.com')
  })

  test('writes by cookie need the CSRF header', async () => {
    const owner = await signIn(OWNER_EMAIL, PASSWORD)
    const r = await handle(MEMBERS, { method: 'POST', headers: { cookie: owner.cookie }, json: { email: 'csrf@example.com', password: 'long enough pass' } })
    expect(r.status).toBe(403)
    expect((await json(r)).code).toBe('csrf_failed')
  })

  test('keys: the organization_member scope is needed; another organization is not found', async () => {
    const bearer = (key: string) => ({ headers: { authorization: `Bearer ${key}` } })
    expect((await handle(MEMBERS, bearer(PERSONAL_KEY))).status).toBe(200)
    const make = async (scopes: string[]) =>
      (await json(handle('/api/personal_api_keys/', { method: 'POST', headers: { authorization: `Bearer ${PERSONAL_KEY}` }, json: { label: scopes[0].slice(0, 30), scopes } }))).value
    const insightsOnly = await make(['insight:read'])
    const membersRead = await make(['organization_member:read'])
    expect((await handle(MEMBERS, bearer(insightsOnly))).status).toBe(403)
    expect((await handle(MEMBERS, bearer(membersRead))).status).toBe(200)
    const write = await handle(MEMBERS, { ...bearer(membersRead), method: 'POST', json: { email: 'k@example.com', password: 'long enough pass' } })
    expect(write.status).toBe(403)

    const other = await createOrganization(stack.services.db.sql, { name: 'Elsewhere' })
    expect((await handle(`/api/organizations/${other.id}/members/`, bearer(PERSONAL_KEY))).status).toBe(404)
    expect((await handle('/api/organizations/nope/members/', bearer(PERSONAL_KEY))).status).toBe(404)
  })
})
