// Organization members attacked from inside: an admin or a member promoting themselves or removing an owner, and two
// owners demoting (or removing) each other at the same moment. What must hold: only owners change members, and the
// organization always keeps an owner who can sign in. On PGlite and on a real Postgres (where the two requests
// truly race: the membership rows are locked, so the second sees the first's change).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, json, startStack, type Stack, type StoreChoice } from '../helpers/stack'
import { createOrganization } from '../../src/projects/accounts'
import { createUser, setPassword } from '../../src/users/service'

const OWNER_EMAIL = 'owner@example.com'
const PASSWORD = 'correct horse battery'
const MEMBERS = '/api/organizations/@current/members/'

describe.each(['embedded', 'real'] as StoreChoice[])('members attacked (%s Postgres)', (postgres) => {
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
  const signIn = async (email: string, password: string) => {
    const r = await handle('/api/login/', { method: 'POST', json: { email, password } })
    expect(r.status).toBe(200)
    const value = (name: string) => r.headers.getSetCookie().find((c) => c.startsWith(`${name}=`))!.split(';')[0].split('=')[1]
    return { cookie: `phog_session=${value('phog_session')}; phog_csrftoken=${value('phog_csrftoken')}`, csrf: value('phog_csrftoken') }
  }
  type Session = Awaited<ReturnType<typeof signIn>>
  const as = (s: Session, method = 'GET', body?: unknown) =>
    ({ method, headers: { cookie: s.cookie, 'x-csrftoken': s.csrf }, ...(body === undefined ? {} : { json: body }) }) as RequestInit & { json?: unknown }
  const uuidOf = async (s: Session, email: string) => ((await json(handle(MEMBERS, as(s)))).results as any[]).find((m) => m.user.email === email).user.uuid as string
  const signInOwners = async (s: Session) => ((await json(handle(MEMBERS, as(s)))).results as any[]).filter((m) => m.level === 15 && m.can_sign_in).length

  beforeAll(async () => {
    stack = await startStack({ postgres, clickhouse: 'embedded' }, { INIT_ADMIN_EMAIL: OWNER_EMAIL, INIT_ADMIN_PASSWORD: PASSWORD })
  })
  afterAll(() => stack?.close())

  test('an admin or a member can neither promote themselves nor demote, remove or add anyone', async () => {
    const owner = await signIn(OWNER_EMAIL, PASSWORD)
    for (const [email, level] of [['admin@example.com', 8], ['member@example.com', 1]] as const) {
      expect((await handle(MEMBERS, as(owner, 'POST', { email, level, password: 'a first password' }))).status).toBe(201)
    }
    const ownerUuid = await uuidOf(owner, OWNER_EMAIL)
    for (const email of ['admin@example.com', 'member@example.com']) {
      const s = await signIn(email, 'a first password')
      const self = await uuidOf(s, email)
      const attempts: [string, unknown][] = [
        [`PATCH ${self}`, { level: 15 }],
        [`PATCH ${ownerUuid}`, { level: 1 }],
        [`DELETE ${ownerUuid}`, undefined],
        ['POST', { email: 'friend@example.com', level: 15, password: 'a first password' }],
        ['POST', { email: OWNER_EMAIL, level: 15 }],
      ]
      for (const [what, body] of attempts) {
        const [method, uuid] = what.split(' ')
        const r = await handle(uuid ? `${MEMBERS}${uuid}/` : MEMBERS, as(s, method, body))
        expect({ email, what, status: r.status }).toEqual({ email, what, status: 403 })
      }
    }
    const levels = ((await json(handle(MEMBERS, as(owner)))).results as any[]).map((m) => [m.user.email, m.level])
    expect(levels).toEqual([[OWNER_EMAIL, 15], ['admin@example.com', 8], ['member@example.com', 1]])
  })

  test('two owners demoting, then removing, each other at the same moment leave an owner who can sign in', async () => {
    const owner = await signIn(OWNER_EMAIL, PASSWORD)
    expect((await handle(MEMBERS, as(owner, 'POST', { email: 'second@example.com', level: 15, password: 'a first password' }))).status).toBe(201)
    const second = await signIn('second@example.com', 'a first password')
    const [ownerUuid, secondUuid] = [await uuidOf(owner, OWNER_EMAIL), await uuidOf(owner, 'second@example.com')]
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all([
        handle(`${MEMBERS}${secondUuid}/`, as(owner, 'PATCH', { level: 1 })),
        handle(`${MEMBERS}${ownerUuid}/`, as(second, 'PATCH', { level: 1 })),
      ])
      // the loser was demoted first: no longer an owner (403), or the last owner (400) had it gone the other way
      const statuses = answers.map((r) => r.status)
      expect(statuses.filter((s) => s === 200)).toHaveLength(1)
      expect(statuses.every((s) => s === 200 || s === 403 || s === 400)).toBe(true)
      const survivor = answers[0].status === 200 ? owner : second
      expect(await signInOwners(survivor)).toBe(1)
      // the survivor makes the other an owner again
      const other = survivor === owner ? secondUuid : ownerUuid
      expect((await handle(`${MEMBERS}${other}/`, as(survivor, 'PATCH', { level: 15 }))).status).toBe(200)
    }
    const removals = await Promise.all([handle(`${MEMBERS}${secondUuid}/`, as(owner, 'DELETE')), handle(`${MEMBERS}${ownerUuid}/`, as(second, 'DELETE'))])
    expect(removals.map((r) => r.status).filter((s) => s === 204)).toHaveLength(1)
    const survivor = removals[0].status === 204 ? owner : second
    expect(await signInOwners(survivor)).toBe(1)
  }, 60_000)

  test("an account whose password another organization's owner chose cannot be taken into this organization until its user sets their own", async () => {
    // two organizations of their own (the test before may have left the first owner out of the default one)
    const sql = stack.services.db.sql
    const [orgA, orgB] = [await createOrganization(sql, { name: 'A company' }), await createOrganization(sql, { name: 'Other company' })]
    await createUser(sql, { email: 'owner-a@example.com', password: 'owner a password', organizationId: orgA.id })
    await createUser(sql, { email: 'owner-b@example.com', password: 'owner b password', organizationId: orgB.id })
    const [ownerA, ownerB] = [await signIn('owner-a@example.com', 'owner a password'), await signIn('owner-b@example.com', 'owner b password')]
    const MEMBERS_A = `/api/organizations/${orgA.id}/members/`
    // owner A makes an account for someone's email, with a password A knows
    expect((await handle(MEMBERS_A, as(ownerA, 'POST', { email: 'victim@example.com', password: 'chosen by owner a' }))).status).toBe(201)
    // B adds that email, thinking it is their colleague's account: refused, so A cannot sign in to B's organization
    const refused = await handle(`/api/organizations/${orgB.id}/members/`, as(ownerB, 'POST', { email: 'victim@example.com' }))
    expect(refused.status).toBe(403)
    expect(((await refused.json()) as { detail: string }).detail).toContain('set their own password')
    // once the user has set their own password, B may add them
    await setPassword(sql, 'victim@example.com', 'my very own password')
    expect((await handle(`/api/organizations/${orgB.id}/members/`, as(ownerB, 'POST', { email: 'victim@example.com' }))).status).toBe(201)
    // the same the other way round
    expect((await handle(`/api/organizations/${orgB.id}/members/`, as(ownerB, 'POST', { email: 'colleague-b@example.com', password: 'chosen by owner b' }))).status).toBe(201)
    expect((await handle(MEMBERS_A, as(ownerA, 'POST', { email: 'colleague-b@example.com' }))).status).toBe(403)
  }, 60_000)
})
