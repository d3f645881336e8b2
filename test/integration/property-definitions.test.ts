// The property definitions REST API on real Postgres and on the embedded one: every list filter, the ordering,
// paging, PATCH/PUT rules, DELETE, seen_together, bulk tags, and project isolation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { recordPairSightings, recordPropertySightings, type PropertySighting } from '../../src/definitions/property-repository'
import { createPersonalKey, createProject } from '../../src/projects/repository'
import { BASE, json, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const base = '/api/projects/1/property_definitions'
const names = (page: { results: { name: string }[] }) => page.results.map((d) => d.name)

const event = (name: string, type: PropertySighting['type'] = 'String'): PropertySighting => ({ teamId: 1, kind: 'event', groupTypeIndex: null, name, type })

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`property definitions API (${postgres} Postgres)`, () => {
    let stack: Stack
    const api = (path: string, init?: RequestInit & { json?: unknown }) => stack.api(path, init)
    const find = async (name: string, query = '') => (await json(api(`${base}/?search=${encodeURIComponent(name)}${query}`))).results.find((d: { name: string }) => d.name === name)

    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
      const sql = stack.services.db.sql
      await recordPropertySightings(sql, [
        event('$browser'),
        event('$current_url'),
        event('price', 'Numeric'),
        event('quantity', 'Numeric'),
        event('timestamp', 'Numeric'), // numeric, but never listed by is_numerical
        event('distinct_id'),
        event('$set'),
        event('$group_0'),
        event('$feature/new-checkout'),
        event('$feature/beta'),
        event('100% off'),
        event('a_b'),
        event('axb'),
        event('Plan Name'),
        event('untyped', null),
        ...Array.from({ length: 120 }, (_, i) => event(`zz_${String(i).padStart(3, '0')}`)),
        { teamId: 1, kind: 'person', groupTypeIndex: null, name: 'email', type: 'String' },
        { teamId: 1, kind: 'person', groupTypeIndex: null, name: 'distinct_id', type: 'String' },
        { teamId: 1, kind: 'person', groupTypeIndex: null, name: 'price', type: 'Numeric' },
        { teamId: 1, kind: 'group', groupTypeIndex: 0, name: 'seats', type: 'Numeric' },
        { teamId: 1, kind: 'group', groupTypeIndex: 2, name: 'industry', type: 'String' },
      ])
      await recordPairSightings(sql, [
        { teamId: 1, event: '$pageview', property: '$browser' },
        { teamId: 1, event: '$pageview', property: '$current_url' },
        { teamId: 1, event: 'purchase', property: 'price' },
        { teamId: 1, event: 'purchase', property: '$browser' },
      ])
    })
    afterAll(() => stack?.close())

    test('an item has PostHog’s shape; defaults are "", [], false, null (never null for description/verified/hidden)', async () => {
      const price = await find('price')
      expect(Object.keys(price).sort()).toEqual(
        ['description', 'hidden', 'id', 'is_numerical', 'is_seen_on_filtered_events', 'name', 'property_type', 'tags', 'updated_at', 'updated_by', 'verified', 'verified_at', 'verified_by'].sort(),
      )
      expect(price).toMatchObject({ name: 'price', description: '', tags: [], is_numerical: true, property_type: 'Numeric', is_seen_on_filtered_events: null, verified: false, verified_at: null, verified_by: null, hidden: false, updated_at: null, updated_by: null })
      expect(price.id).toMatch(/^[0-9a-f-]{36}$/)
      expect(await json(api(`${base}/${price.id}/`))).toEqual(price)
      expect(await find('untyped')).toMatchObject({ property_type: null, is_numerical: false })
    })

    test('type: event by default; person, group (with its index) and session apart; a bad type is 400 attr type', async () => {
      const events = await json(api(`${base}/?limit=1000`))
      expect(names(events)).toContain('price')
      expect(names(events)).not.toContain('email')
      expect(names(await json(api(`${base}/?type=person`)))).toEqual(['distinct_id', 'email', 'price'])
      expect(names(await json(api(`${base}/?type=group&group_type_index=0`)))).toEqual(['seats'])
      expect(names(await json(api(`${base}/?type=group&group_type_index=2`)))).toEqual(['industry'])
      expect((await json(api(`${base}/?type=session`))).count).toBe(0)
      const bad = await api(`${base}/?type=cohort`)
      expect(bad.status).toBe(400)
      expect(await json(bad)).toEqual({ type: 'validation_error', code: 'invalid_choice', detail: '"cohort" is not a valid choice.', attr: 'type' })
      for (const query of ['type=group', 'type=person&group_type_index=0', 'type=group&group_type_index=5', 'type=group&group_type_index=-1']) {
        const r = await api(`${base}/?${query}`)
        expect(r.status).toBe(400)
        expect(await json(r)).toMatchObject({ type: 'validation_error', attr: 'group_type_index' })
      }
    })

    test('type=event never lists distinct_id, $set or $group_N (type=person does list distinct_id)', async () => {
      const all = names(await json(api(`${base}/?limit=1000`)))
      for (const hidden of ['distinct_id', '$set', '$group_0']) expect(all).not.toContain(hidden)
      expect(all).toHaveLength(132)
    })

    test('order: verified first, then by name in byte order; pages of the default 100 with absolute next/previous', async () => {
      const first = await json(api(`${base}/`))
      expect(first.count).toBe(132)
      expect(first.results).toHaveLength(100)
      expect(names(first).slice(0, 6)).toEqual(['$browser', '$current_url', '$feature/beta', '$feature/new-checkout', '100% off', 'Plan Name'])
      expect(first.next).toBe(`${BASE}${base}/?limit=100&offset=100`)
      expect(first.previous).toBeNull()
      const second = await json(api(first.next.slice(BASE.length)))
      expect(second.results).toHaveLength(32)
      expect(second.next).toBeNull()
      expect(second.previous).toBe(`${BASE}${base}/?limit=100`)
      expect(new Set([...names(first), ...names(second)]).size).toBe(132)
      const small = await json(api(`${base}/?limit=5&offset=5&type=event`))
      expect(small.next).toBe(`${BASE}${base}/?limit=5&offset=10&type=event`)
      expect(small.previous).toBe(`${BASE}${base}/?limit=5&type=event`)
      expect((await json(api(`${base}/?offset=500`))).results).toEqual([])
      expect(await json(api(`${base}/?limit=0`))).toMatchObject({ type: 'validation_error', attr: 'limit' })
    })

    test('search: every term, case-insensitive, % and _ literal', async () => {
      expect(names(await json(api(`${base}/?search=PLAN%20name`)))).toEqual(['Plan Name'])
      expect(names(await json(api(`${base}/?search=feature%20beta`)))).toEqual(['$feature/beta'])
      expect(names(await json(api(`${base}/?search=a_b`)))).toEqual(['a_b'])
      expect(names(await json(api(`${base}/?search=100%25`)))).toEqual(['100% off'])
    })

    test('properties=a,b; excluded_properties=[…]; is_feature_flag=true|false; is_numerical=true', async () => {
      expect(names(await json(api(`${base}/?properties=price,quantity,nope`)))).toEqual(['price', 'quantity'])
      expect(names(await json(api(`${base}/?search=a&excluded_properties=${encodeURIComponent('["axb","a_b"]')}`)))).not.toContain('axb')
      expect(names(await json(api(`${base}/?is_feature_flag=true`)))).toEqual(['$feature/beta', '$feature/new-checkout'])
      const noFlags = names(await json(api(`${base}/?is_feature_flag=false&limit=1000`)))
      expect(noFlags).toHaveLength(130)
      expect(noFlags.some((n) => n.startsWith('$feature/'))).toBe(false)
      expect(names(await json(api(`${base}/?is_numerical=true`)))).toEqual(['price', 'quantity'])
      expect((await json(api(`${base}/?is_numerical=false`))).count).toBe(132)
      expect(await json(api(`${base}/?excluded_properties=nope`))).toMatchObject({ type: 'validation_error', attr: 'excluded_properties' })
      expect(await json(api(`${base}/?is_numerical=perhaps`))).toMatchObject({ type: 'validation_error', attr: 'is_numerical' })
    })

    test('event_names: is_seen_on_filtered_events on each item, seen ones first; filter_by_event_names keeps only those', async () => {
      const q = encodeURIComponent('["purchase"]')
      const page = await json(api(`${base}/?event_names=${q}&limit=4`))
      expect(page.results.map((d: { name: string; is_seen_on_filtered_events: boolean }) => [d.name, d.is_seen_on_filtered_events])).toEqual([
        ['$browser', true],
        ['price', true],
        ['$current_url', false],
        ['$feature/beta', false],
      ])
      const only = await json(api(`${base}/?event_names=${encodeURIComponent('["purchase","$pageview"]')}&filter_by_event_names=true`))
      expect(only.count).toBe(3)
      expect(names(only)).toEqual(['$browser', '$current_url', 'price'])
      expect(await json(api(`${base}/?type=person&event_names=${q}`))).toMatchObject({ type: 'validation_error', attr: 'event_names' })
      expect(await json(api(`${base}/?event_names=notjson`))).toMatchObject({ type: 'validation_error', attr: 'event_names' })
    })

    test('seen_together: one boolean per event name asked about', async () => {
      const r = await json(api(`${base}/seen_together/?event_names=purchase&event_names=$pageview&event_names=signup&property_name=price`))
      expect(r).toEqual({ purchase: true, $pageview: false, signup: false })
      expect(await json(api(`${base}/seen_together/?event_names=__proto__&property_name=price`))).toEqual(JSON.parse('{"__proto__": false}'))
      expect(await json(api(`${base}/seen_together/?property_name=price`))).toMatchObject({ type: 'validation_error', code: 'required', attr: 'event_names' })
      expect(await json(api(`${base}/seen_together/?event_names=purchase`))).toMatchObject({ type: 'validation_error', code: 'required', attr: 'property_name' })
    })

    test('PATCH: description, tags (normalised), property_type (with is_numerical), stamps; read-only members ignored; PUT alike', async () => {
      const d = await find('quantity')
      const r = await api(`${base}/${d.id}/`, { method: 'PATCH', json: { description: '  How many  ', tags: ['Sales', 'sales ', 'Q3'], property_type: 'String', name: 'renamed', is_numerical: true, id: 'x' } })
      expect(r.status).toBe(200)
      const changed = await json(r)
      expect(changed).toMatchObject({ id: d.id, name: 'quantity', description: 'How many', tags: ['sales', 'q3'], property_type: 'String', is_numerical: false })
      expect(changed.updated_by).toMatchObject({ email: 'admin@localhost', first_name: 'admin' })
      expect(Date.parse(changed.updated_at)).toBeGreaterThan(Date.now() - 60_000)
      const back = await json(api(`${base}/${d.id}`, { method: 'PUT', json: { property_type: 'Numeric' } }))
      expect(back).toMatchObject({ property_type: 'Numeric', is_numerical: true, description: 'How many' })
      expect(await json(api(`${base}/${d.id}/`, { method: 'PATCH', json: { property_type: null } }))).toMatchObject({ property_type: null, is_numerical: false })
      await api(`${base}/${d.id}/`, { method: 'PATCH', json: { property_type: 'Numeric' } })
      for (const [body, attr, code] of [
        [{ property_type: 'Integer' }, 'property_type', 'invalid_choice'],
        [{ verified: 'yes' }, 'verified', undefined],
        [{ hidden: 1 }, 'hidden', undefined],
        [{ description: false }, 'description', undefined],
        [{ tags: 'sales' }, 'tags', 'not_a_list'],
        [{ group_type_index: 1 }, 'group_type_index', undefined],
      ] as const) {
        const bad = await api(`${base}/${d.id}/`, { method: 'PATCH', json: body })
        expect(bad.status).toBe(400)
        expect(await json(bad)).toMatchObject({ type: 'validation_error', attr, ...(code ? { code } : {}) })
      }
    })

    test('verified stamps who and when (again: unchanged); hidden unverifies; both at once is 400; the list shows verified first', async () => {
      const d = await find('zz_119')
      const patch = (body: unknown) => api(`${base}/${d.id}/`, { method: 'PATCH', json: body })
      const verified = await json(patch({ verified: true, verified_at: '2000-01-01T00:00:00Z', verified_by: null }))
      expect(verified).toMatchObject({ verified: true, hidden: false, verified_by: { email: 'admin@localhost' } })
      expect(Date.parse(verified.verified_at)).toBeGreaterThan(Date.now() - 60_000)
      expect(names(await json(api(`${base}/?limit=2`)))).toEqual(['zz_119', '$browser'])
      const again = await json(patch({ verified: true }))
      expect(again.verified_at).toBe(verified.verified_at)
      const both = await patch({ verified: true, hidden: true })
      expect(both.status).toBe(400)
      expect(await json(both)).toEqual({ type: 'validation_error', code: 'invalid_input', detail: 'A property cannot be both hidden and verified', attr: null })
      const hidden = await json(patch({ hidden: true }))
      expect(hidden).toMatchObject({ hidden: true, verified: false, verified_at: null, verified_by: null })
      expect(names(await json(api(`${base}/?search=zz_119`)))).toEqual(['zz_119'])
      expect((await json(api(`${base}/?search=zz_119&exclude_hidden=true`))).count).toBe(0)
      expect(await json(patch({ verified: true }))).toMatchObject({ verified: true, hidden: false })
      expect(await json(patch({ verified: false }))).toMatchObject({ verified: false, verified_at: null, verified_by: null })
    })

    test('bulk_update_tags: add, remove, set; sorted tags in the answer; unknown ids skipped', async () => {
      const a = await find('axb')
      const b = await find('a_b')
      const unknown = crypto.randomUUID()
      const post = (body: unknown) => json(api(`${base}/bulk_update_tags/`, { method: 'POST', json: body }))
      expect(await post({ ids: [a.id, b.id, unknown, 'nope'], action: 'add', tags: ['Zeta', 'alpha'] })).toEqual({
        updated: [
          { id: a.id, tags: ['alpha', 'zeta'] },
          { id: b.id, tags: ['alpha', 'zeta'] },
        ],
        skipped: [
          { id: unknown, reason: 'Not found' },
          { id: 'nope', reason: 'Not found' },
        ],
      })
      expect((await post({ ids: [a.id], action: 'add', tags: ['beta', 'alpha'] })).updated).toEqual([{ id: a.id, tags: ['alpha', 'beta', 'zeta'] }])
      expect((await post({ ids: [a.id], action: 'remove', tags: ['zeta'] })).updated).toEqual([{ id: a.id, tags: ['alpha', 'beta'] }])
      expect((await post({ ids: [a.id, b.id], action: 'set', tags: [] })).updated).toEqual([
        { id: a.id, tags: [] },
        { id: b.id, tags: [] },
      ])
      expect(await post({ ids: [a.id], action: 'flip', tags: ['x'] })).toMatchObject({ type: 'validation_error', attr: 'action' })
      expect(await post({ ids: [a.id], action: 'add', tags: [] })).toMatchObject({ type: 'validation_error', attr: 'tags' })
    })

    test('DELETE: 204 with no body, then 404; unknown and non-UUID ids are 404 in the error envelope; POST is 405', async () => {
      const d = await find('$current_url')
      const r = await api(`${base}/${d.id}/`, { method: 'DELETE' })
      expect(r.status).toBe(204)
      expect(await r.text()).toBe('')
      for (const id of [d.id, crypto.randomUUID(), 'not-a-uuid', '12']) {
        for (const method of ['GET', 'PATCH', 'DELETE']) {
          const missing = await api(`${base}/${id}/`, { method, ...(method === 'PATCH' ? { json: { description: 'x' } } : {}) })
          expect(missing.status).toBe(404)
          expect(await json(missing)).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
        }
      }
      expect((await api(`${base}/`, { method: 'POST', json: { name: 'x' } })).status).toBe(405)
    })

    test('project isolation: another project’s definitions never appear and cannot be read, changed or tagged', async () => {
      const sql = stack.services.db.sql
      // a second project of the same organization, and a project of another organization
      const sibling = await createProject(sql, { name: 'Sibling' })
      const [org] = await sql`insert into organizations (name) values ('Other') returning id`
      const foreign = await createProject(sql, { name: 'Theirs', organizationId: org.id })
      for (const teamId of [sibling.id, foreign.id]) {
        await recordPropertySightings(sql, [{ teamId, kind: 'event', groupTypeIndex: null, name: `secret_${teamId}`, type: 'String' }, { teamId, kind: 'event', groupTypeIndex: null, name: 'price', type: 'String' }])
        await recordPairSightings(sql, [{ teamId, event: 'signup', property: 'price' }])
      }
      const [theirs] = await sql`select id from property_definitions where team_id = ${foreign.id} and name = 'price'`
      const [sibling_] = await sql`select id from property_definitions where team_id = ${sibling.id} and name = 'price'`
      expect((await json(api(`${base}/?search=secret`))).count).toBe(0)
      expect((await find('price')).property_type).toBe('Numeric')
      expect(await json(api(`${base}/seen_together/?event_names=signup&property_name=price`))).toEqual({ signup: false })
      for (const id of [theirs.id, sibling_.id]) {
        expect((await api(`${base}/${id}/`)).status).toBe(404)
        expect((await api(`${base}/${id}/`, { method: 'PATCH', json: { description: 'mine now' } })).status).toBe(404)
        expect((await api(`${base}/${id}/`, { method: 'DELETE' })).status).toBe(404)
        expect((await json(api(`${base}/bulk_update_tags/`, { method: 'POST', json: { ids: [id], action: 'set', tags: ['x'] } }))).skipped).toEqual([{ id, reason: 'Not found' }])
      }
      const [after] = await sql`select description, tags from property_definitions where id = ${theirs.id}`
      expect(after).toEqual({ description: '', tags: [] })
      // the sibling project is the key's to read under its own id; the foreign one is not
      expect(names(await json(api(`/api/projects/${sibling.id}/property_definitions/?search=secret`)))).toEqual([`secret_${sibling.id}`])
      expect((await api(`/api/projects/${foreign.id}/property_definitions/`)).status).toBe(404)
      expect((await api(`/api/projects/${foreign.id}/property_definitions/${theirs.id}/`)).status).toBe(404)
      // and their key cannot read ours
      const { key } = await createPersonalKey(sql, { label: 'theirs', email: 'them@other.org' })
      await sql`update organization_members set organization_id = ${org.id} where user_id = (select id from users where email = 'them@other.org')`
      expect((await api(`${base}/`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(404)
    })
  })
}
