// The event definitions REST API on real Postgres and on the embedded one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { recordSightings } from '../../src/definitions/repository'
import { createPersonalKey, createProject } from '../../src/projects/repository'
import { BASE, json, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const base = '/api/projects/1/event_definitions'
const path = (url: string) => {
  const u = new URL(url)
  return u.pathname + u.search
}

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`event definitions API (${postgres} Postgres)`, () => {
    let stack: Stack
    const names = Array.from({ length: 250 }, (_, i) => `z_event_${i}`)
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
      const day = Date.UTC(2024, 0, 1)
      await recordSightings(stack.services.db.sql, [
        ...names.map((name, i) => ({ teamId: 1, name, seenAt: day + (i % 5) * 86_400_000 })),
        ...['$pageview', '$identify', 'signed up', 'signed_up', '100% done', 'a_b', 'axb', 'Sign Up Completed'].map((name) => ({ teamId: 1, name, seenAt: day + 10 * 86_400_000 })),
      ])
    })
    afterAll(() => stack?.close())

    test('pages of the default size 100 walk all 258 definitions via next, with no repeat or gap', async () => {
      const seen: string[] = []
      let url: string | null = `${BASE}${base}/`
      let pages = 0
      while (url) {
        const page: any = await json(stack.api(path(url)))
        expect(page.count).toBe(258)
        seen.push(...page.results.map((d: { name: string }) => d.name))
        if (pages === 1) expect(page.previous).toBe(`${BASE}${base}/?limit=100`)
        url = page.next
        pages++
      }
      expect(pages).toBe(3)
      expect(seen).toHaveLength(258)
      expect(new Set(seen).size).toBe(258)
    })

    test('small pages: next and previous carry limit and offset', async () => {
      const first = await json(stack.api(`${base}/?limit=40&ordering=name`))
      expect(first.next).toBe(`${BASE}${base}/?limit=40&ordering=name&offset=40`)
      expect(first.previous).toBeNull()
      const last = await json(stack.api(`${base}/?limit=40&offset=240&ordering=name`))
      expect(last.results).toHaveLength(18)
      expect(last.next).toBeNull()
      expect(last.previous).toBe(`${BASE}${base}/?limit=40&offset=200&ordering=name`)
      const past = await json(stack.api(`${base}/?offset=1000`))
      expect(past).toMatchObject({ count: 258, results: [], next: null })
    })

    test('default ordering: newest day first, then name in byte order', async () => {
      const page = await json(stack.api(`${base}/?limit=8`))
      expect(page.results.map((d: { name: string }) => d.name)).toEqual(['$identify', '$pageview', '100% done', 'Sign Up Completed', 'a_b', 'axb', 'signed up', 'signed_up'])
    })

    test('ordering by name uses byte order; - means descending; unknown keys are ignored', async () => {
      const asc = await json(stack.api(`${base}/?ordering=name&ordering=bogus&search=z_event_10`))
      expect(asc.results.map((d: { name: string }) => d.name)).toEqual(['z_event_10', 'z_event_100', 'z_event_101', 'z_event_102', 'z_event_103', 'z_event_104', 'z_event_105', 'z_event_106', 'z_event_107', 'z_event_108', 'z_event_109'])
      const desc = await json(stack.api(`${base}/?ordering=-name&limit=2`))
      expect(desc.results.map((d: { name: string }) => d.name)).toEqual(['z_event_99', 'z_event_98'])
    })

    test('search: every term must match, case-insensitively; shortest names first', async () => {
      const r = await json(stack.api(`${base}/?search=SIGN%20up`))
      expect(r.results.map((d: { name: string }) => d.name)).toEqual(['signed up', 'signed_up', 'Sign Up Completed'])
    })

    test('search treats % and _ literally', async () => {
      expect((await json(stack.api(`${base}/?search=a_b`))).results.map((d: { name: string }) => d.name)).toEqual(['a_b'])
      expect((await json(stack.api(`${base}/?search=100%25`))).results.map((d: { name: string }) => d.name)).toEqual(['100% done'])
      expect((await json(stack.api(`${base}/?search=%25`))).count).toBe(1)
      expect((await json(stack.api(`${base}/?search=_`))).count).toBe(252) // names with a real underscore
    })

    test('event_type separates PostHog’s $ events from custom ones', async () => {
      expect((await json(stack.api(`${base}/?event_type=event_posthog`))).results.map((d: { name: string }) => d.name)).toEqual(['$identify', '$pageview'])
      expect((await json(stack.api(`${base}/?event_type=event_custom`))).count).toBe(256)
      expect((await json(stack.api(`${base}/?event_type=all`))).count).toBe(258)
      const bad = await stack.api(`${base}/?event_type=actions`)
      expect(bad.status).toBe(400)
      expect(await json(bad)).toMatchObject({ type: 'validation_error', attr: 'event_type' })
    })

    test('an object has the shape of the original API description', async () => {
      const d = (await json(stack.api(`${base}/?search=axb`))).results[0]
      expect(Object.keys(d).sort()).toEqual(['action_id', 'created_at', 'created_by', 'description', 'hidden', 'id', 'is_action', 'is_calculating', 'last_calculated_at', 'last_seen_at', 'last_updated_at', 'name', 'post_to_chat', 'tags', 'verified', 'verified_at', 'verified_by'].sort())
      expect(d).toMatchObject({ name: 'axb', description: '', tags: [], verified: false, verified_at: null, verified_by: null, hidden: false, is_action: false, action_id: null, is_calculating: false, created_by: null, post_to_chat: false, created_at: '2024-01-11T00:00:00Z' })
      const one = await json(stack.api(`${base}/${d.id}/`))
      expect(one).toEqual(d)
      expect(await json(stack.api(`${base}/${d.id}`))).toEqual(d)
    })

    test('PATCH changes the given members and returns the whole object; unknown members are named', async () => {
      const d = (await json(stack.api(`${base}/?search=a_b`))).results[0]
      const r = await stack.api(`${base}/${d.id}/`, { method: 'PATCH', json: { tags: ['Checkout', 'checkout ', 'web'], post_to_chat: true, last_seen_at: '2024-02-02T10:00:00Z' } })
      expect(r.status).toBe(200)
      const updated = await json(r)
      expect(updated).toMatchObject({ id: d.id, name: 'a_b', tags: ['checkout', 'web'], post_to_chat: true, last_seen_at: '2024-02-02T10:00:00Z' })
      expect(Date.parse(updated.last_updated_at)).toBeGreaterThan(Date.parse(d.last_updated_at))
      const renamed = await json(stack.api(`${base}/${d.id}`, { method: 'PATCH', json: { name: 'a_b renamed' } }))
      expect(renamed.name).toBe('a_b renamed')
      const unknown = await stack.api(`${base}/${d.id}/`, { method: 'PATCH', json: { owner: 'nope' } })
      expect(unknown.status).toBe(400)
      expect(await json(unknown)).toMatchObject({ type: 'validation_error', attr: 'owner' })
      const taken = await json(stack.api(`${base}/${d.id}/`, { method: 'PATCH', json: { name: 'axb' } }))
      expect(taken).toMatchObject({ type: 'validation_error', code: 'unique', attr: 'name' })
    })

    test('PATCH reads fields as the flag API does: a number name is its text, blank/null/lone surrogates refused, dates in range', async () => {
      const d = (await json(stack.api(`${base}/?search=axb`))).results[0]
      const patch = (body: unknown) => stack.api(`${base}/${d.id}/`, { method: 'PATCH', json: body })
      expect((await json(patch({ name: 123 }))).name).toBe('123')
      const flagName = await json(stack.api('/api/projects/@current/feature_flags/', { method: 'POST', json: { key: 'number-name', name: 123, filters: { groups: [{ rollout_percentage: 0 }] } } }))
      expect(flagName.name).toBe('123')
      for (const [body, code] of [
        [{ name: '   ' }, 'blank'],
        [{ name: null }, 'null'],
        [{ name: {} }, 'invalid_input'],
        [{ name: '\ud800' }, 'invalid_input'],
      ] as const) {
        const r = await patch(body)
        expect(r.status).toBe(400)
        expect(await json(r)).toMatchObject({ type: 'validation_error', code, attr: 'name' })
      }
      for (const when of ['99999999999999999', '0042-01-01T00:00:00Z', '2024-02-30T00:00:00Z', '2024-13-01']) {
        const r = await patch({ created_at: when })
        expect(r.status).toBe(400)
        expect(await json(r)).toMatchObject({ type: 'validation_error', attr: 'created_at' })
      }
      expect((await json(patch({ created_at: '2024-02-29T00:00:00Z' }))).created_at).toBe('2024-02-29T00:00:00Z')
      await patch({ name: 'axb' })
    })

    test('DELETE answers 204, then the definition is 404', async () => {
      const d = (await json(stack.api(`${base}/?search=signed_up`))).results[0]
      const r = await stack.api(`${base}/${d.id}/`, { method: 'DELETE' })
      expect(r.status).toBe(204)
      expect(await r.text()).toBe('')
      expect((await stack.api(`${base}/${d.id}/`)).status).toBe(404)
      expect((await stack.api(`${base}/${d.id}/`, { method: 'DELETE' })).status).toBe(404)
    })

    test('errors: bad key, no key, unknown or non-UUID ids, bad paging', async () => {
      const bad = await stack.api(`${base}/`, { headers: { authorization: 'Bearer phx_wrong_key_value' } })
      expect(bad.status).toBe(401)
      expect(await json(bad)).toMatchObject({ type: 'authentication_error', code: 'invalid_personal_api_key' })
      expect((await stack.app.handle(new Request(`${BASE}${base}/`))).status).toBe(401)
      for (const id of [crypto.randomUUID(), 'not-a-uuid', '1']) {
        const r = await stack.api(`${base}/${id}/`)
        expect(r.status).toBe(404)
        expect(await json(r)).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
      }
      expect(await json(stack.api(`${base}/?limit=0`))).toMatchObject({ type: 'validation_error', code: 'min_value', attr: 'limit' })
      expect(await json(stack.api(`${base}/?limit=abc`))).toMatchObject({ type: 'validation_error', attr: 'limit' })
      expect(await json(stack.api(`${base}/?offset=-1`))).toMatchObject({ attr: 'offset' })
    })

    test('@current works; another organization’s project and its definitions are invisible', async () => {
      expect((await json(stack.api('/api/projects/@current/event_definitions/?limit=1'))).count).toBe(257)
      const sql = stack.services.db.sql
      const [org] = await sql`insert into organizations (name) values ('Other') returning id`
      const other = await createProject(sql, { name: 'Theirs', organizationId: org.id })
      await recordSightings(sql, [{ teamId: other.id, name: 'their secret event', seenAt: Date.now() }])
      const [theirs] = await sql`select id from event_definitions where name = 'their secret event'`
      expect((await stack.api(`/api/projects/${other.id}/event_definitions/`)).status).toBe(404)
      expect((await stack.api(`/api/projects/${other.id}/event_definitions/${theirs.id}/`)).status).toBe(404)
      expect((await stack.api(`${base}/${theirs.id}/`)).status).toBe(404) // right id, wrong project
      expect((await stack.api(`${base}/${theirs.id}/`, { method: 'PATCH', json: { tags: ['x'] } })).status).toBe(404)
      expect((await stack.api(`${base}/${theirs.id}/`, { method: 'DELETE' })).status).toBe(404)
      expect((await json(stack.api(`${base}/?search=secret`))).count).toBe(0)
      // and their key cannot see ours
      const { key } = await createPersonalKey(sql, { label: 'theirs', email: 'them@other.org' })
      await sql`update organization_members set organization_id = ${org.id} where user_id = (select id from users where email = 'them@other.org')`
      expect((await stack.api(`${base}/`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404)
    })
  })
}
