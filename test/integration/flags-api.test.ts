// The flag REST API and local_evaluation, on real Postgres and on the embedded one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createPersonalKey, createProject } from '../../src/projects/repository'
import { createFlag, insertGroupType } from '../helpers/flags'
import { BASE, json, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const simple = (rollout: number | null = 100) => ({ groups: [{ properties: [], rollout_percentage: rollout }] })

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`feature flag API on ${postgres} Postgres`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(() => stack?.close())

    const post = (body: unknown, project = '1') => stack.api(`/api/projects/${project}/feature_flags/`, { method: 'POST', json: body })
    const patch = (id: number, body: unknown) => stack.api(`/api/projects/1/feature_flags/${id}/`, { method: 'PATCH', json: body })

    test('create: 201 with PostHog fields', async () => {
      const r = await post({ key: 'api-created', name: 'What it does', filters: simple(30) })
      expect(r.status).toBe(201)
      const flag = await json(r)
      expect(flag).toMatchObject({
        key: 'api-created',
        name: 'What it does',
        filters: simple(30),
        active: true,
        deleted: false,
        ensure_experience_continuity: false,
        version: 1,
        is_simple_flag: true,
        rollout_percentage: 30,
        has_encrypted_payloads: false,
      })
      expect(typeof flag.id).toBe('number')
      expect(flag.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z$/)
      expect(flag.updated_at).toMatch(/Z$/)
      expect(flag.created_by).toEqual({
        id: expect.any(Number),
        uuid: expect.any(String),
        distinct_id: expect.any(String),
        first_name: 'admin',
        email: 'admin@localhost',
        is_email_verified: false,
      })
      // not simple: properties, two conditions, or a group flag
      const complex = await createFlag(stack, {
        key: 'api-complex',
        filters: { groups: [{ properties: [{ key: 'email', value: 'a@b.c', type: 'person' }], rollout_percentage: 20 }] },
      })
      expect(complex).toMatchObject({ is_simple_flag: false, rollout_percentage: null })
    })

    test('every validation error is 400 validation_error with its code and attr', async () => {
      await createFlag(stack, { key: 'taken-key', filters: simple() })
      const person = (p: Record<string, unknown>) => ({ groups: [{ properties: [{ type: 'person', key: 'k', ...p }], rollout_percentage: 100 }] })
      const cases: [unknown, string, string | null, string?][] = [
        [{ filters: simple() }, 'required', 'key', 'This field is required.'],
        [{ key: '' }, 'blank', 'key'],
        [{ key: 'x'.repeat(401) }, 'max_length', 'key'],
        [{ key: 'taken-key', filters: simple() }, 'unique', 'key', 'There is already a feature flag with this key.'],
        [{ key: 'white space' }, 'invalid_key', 'key', 'Only letters, numbers, hyphens (-) & underscores (_) are allowed.'],
        [{ key: 'k1', name: ['x'] }, 'invalid_input', 'name'],
        [{ key: 'k1', filters: [] }, 'not_a_dict', 'filters'],
        [{ key: 'k1', filters: {} }, 'invalid_input', 'filters', 'Feature flags must have at least one condition set (group).'],
        [{ key: 'k1', filters: { groups: [{ properties: [{ key: 'e', value: 1, type: 'event' }] }] } }, 'invalid_input', 'filters', 'Filters are not valid (can only use person, cohort, and flag properties)'],
        [{ key: 'k1', filters: { aggregation_group_type_index: 0, groups: [{ properties: [{ key: 'e', value: 1, type: 'person' }] }] } }, 'invalid_input', 'filters', 'Filters are not valid (can only use group properties)'],
        [{ key: 'k1', filters: { groups: [{}], multivariate: { variants: [{ key: 'a', rollout_percentage: 60 }, { key: 'b', rollout_percentage: 30 }] } } }, 'invalid_input', 'filters', 'Invalid variant definitions: Variant rollout percentages must sum to 100.'],
        [{ key: 'k1', filters: { groups: [{ variant: 'nope' }], multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] } } }, 'invalid_input', 'filters', 'Filters are not valid (variant override does not exist)'],
        [{ key: 'k1', filters: person({ value: 5, operator: 'gt' }) }, 'invalid_value', 'filters', 'Invalid value for operator gt: 5'],
        [{ key: 'k1', filters: person({ value: 'someday', operator: 'is_date_after' }) }, 'invalid_date', 'filters', 'Invalid date value: someday'],
        [{ key: 'k1', filters: person({ value: 'x', operator: 'like' }) }, 'invalid_operator', 'filters', 'Invalid operator: like'],
        [{ key: 'k1', filters: person({ value: Array.from({ length: 1001 }, (_, i) => i) }) }, 'invalid_input', 'filters'],
        [{ key: 'k1', filters: { groups: [{ properties: [{ key: 'id', value: 2, type: 'cohort' }] }] } }, 'cohort_does_not_exist', 'filters', 'Cohort with id 2 does not exist'],
        [{ key: 'k1', filters: { ...simple(), payloads: { true: '{oops' } } }, 'invalid_input', 'filters', 'Payload value is not valid JSON'],
        [{ key: 'k1', filters: { ...simple(), payloads: { control: '1' } } }, 'invalid_input', 'filters', "Payload keys must be 'true' for boolean flags"],
        [{ key: 'k1', active: 'sometimes' }, 'invalid_input', 'active', 'Must be a valid boolean.'],
        [{ key: 'k1', ensure_experience_continuity: 'x' }, 'invalid_input', 'ensure_experience_continuity'],
      ]
      for (const [body, code, attr, detail] of cases) {
        const r = await post(body)
        const got = await json(r)
        expect({ body, status: r.status, type: got.type, code: got.code, attr: got.attr }).toEqual({ body, status: 400, type: 'validation_error', code, attr })
        if (detail) expect(got.detail).toBe(detail)
      }
      const broken = await stack.api('/api/projects/1/feature_flags/', { method: 'POST', body: '{"key": ', headers: { 'content-type': 'application/json' } })
      expect(broken.status).toBe(400)
      expect(await json(broken)).toMatchObject({ type: 'validation_error' })
    })

    test('list: DRF envelope, newest first, no deleted flags, search and active filters, pages', async () => {
      const a = await createFlag(stack, { key: 'list-a', name: 'searchable thing', filters: simple() })
      const b = await createFlag(stack, { key: 'list-b', filters: simple(), active: false })
      const c = await createFlag(stack, { key: 'list-c', filters: simple() })
      await patch(c.id, { deleted: true })
      const all = await json(stack.api('/api/projects/1/feature_flags/?limit=1000'))
      expect(Object.keys(all)).toEqual(['count', 'next', 'previous', 'results'])
      const keys = all.results.map((f: { key: string }) => f.key)
      expect(keys.indexOf('list-b')).toBeLessThan(keys.indexOf('list-a'))
      expect(keys).not.toContain('list-c')
      expect(all.count).toBe(all.results.length)
      expect((await json(stack.api('/api/projects/1/feature_flags/?search=SEARCHABLE'))).results.map((f: { id: number }) => f.id)).toEqual([a.id])
      expect((await json(stack.api('/api/projects/1/feature_flags/?search=list-'))).count).toBe(2)
      const inactive = (await json(stack.api('/api/projects/1/feature_flags/?active=false'))).results.map((f: { id: number }) => f.id)
      expect(inactive).toEqual([b.id])
      const first = await json(stack.api('/api/projects/1/feature_flags/?limit=1'))
      expect(first.results).toHaveLength(1)
      expect(first.next).toBe(`${BASE}/api/projects/1/feature_flags/?limit=1&offset=1`)
      expect(first.previous).toBeNull()
      const second = await json(stack.api('/api/projects/1/feature_flags/?limit=1&offset=1'))
      expect(second.previous).toBe(`${BASE}/api/projects/1/feature_flags/?limit=1`)
      expect((await stack.api('/api/projects/1/feature_flags/?limit=0')).status).toBe(400)
    })

    test('retrieve: deleted flags too; unknown ids and other organizations are 404', async () => {
      const f = await createFlag(stack, { key: 'retrieve-me', filters: simple() })
      for (const path of [`/api/projects/1/feature_flags/${f.id}/`, `/api/projects/1/feature_flags/${f.id}`, `/api/projects/@current/feature_flags/${f.id}`]) {
        const r = await stack.api(path)
        expect(r.status).toBe(200)
        expect((await json(r)).key).toBe('retrieve-me')
      }
      await patch(f.id, { deleted: true })
      expect(await json(stack.api(`/api/projects/1/feature_flags/${f.id}/`))).toMatchObject({ key: 'retrieve-me', deleted: true })
      expect((await stack.api('/api/projects/1/feature_flags/999999/')).status).toBe(404)
      expect((await stack.api('/api/projects/1/feature_flags/abc/')).status).toBe(404)
      const sql = stack.services.db.sql
      const [org] = await sql`insert into organizations (name) values ('Elsewhere') returning id`
      const other = await createProject(sql, { name: 'Not yours', organizationId: org.id })
      const r = await stack.api(`/api/projects/${other.id}/feature_flags/`)
      expect(r.status).toBe(404)
      expect(await json(r)).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Project not found.', attr: null })
      expect((await post({ key: 'sneaky', filters: simple() }, String(other.id))).status).toBe(404)
    })

    test('PATCH bumps the version, keeps filters without groups, soft-deletes; keys of deleted flags are free', async () => {
      const f = await createFlag(stack, { key: 'patch-me', filters: simple(10) })
      const r1 = await json(patch(f.id, { name: 'renamed', filters: { payloads: { true: 'ignored' } } }))
      expect(r1).toMatchObject({ name: 'renamed', version: 2, filters: simple(10) })
      const r2 = await json(patch(f.id, { filters: simple(90), active: false }))
      expect(r2).toMatchObject({ version: 3, active: false, rollout_percentage: 90 })
      const other = await createFlag(stack, { key: 'patch-other', filters: simple() })
      const clash = await patch(other.id, { key: 'patch-me' })
      expect(clash.status).toBe(400)
      expect(await json(clash)).toMatchObject({ code: 'unique', attr: 'key' })
      expect((await json(patch(f.id, { key: 'patch-me' }))).version).toBe(4) // its own key is fine
      expect((await json(patch(f.id, { deleted: true }))).deleted).toBe(true)
      const again = await createFlag(stack, { key: 'patch-me', filters: simple() })
      expect(again.id).not.toBe(f.id)
      expect((await stack.api(`/api/projects/1/feature_flags/${f.id}/`)).status).toBe(404) // hard-deleted on reuse
      const put = await stack.api(`/api/projects/1/feature_flags/${again.id}/`, { method: 'PUT', json: { name: 'no key' } })
      expect(put.status).toBe(400)
      expect(await json(put)).toMatchObject({ code: 'required', attr: 'key' })
      const put2 = await stack.api(`/api/projects/1/feature_flags/${again.id}`, { method: 'PUT', json: { key: 'patch-me', name: 'put', filters: simple(5) } })
      expect(await json(put2)).toMatchObject({ name: 'put', version: 2, rollout_percentage: 5 })
      expect((await patch(424242, { name: 'x' })).status).toBe(404)
    })

    test('DELETE is 405: flags are deleted with PATCH {"deleted": true}', async () => {
      const f = await createFlag(stack, { key: 'no-hard-delete', filters: simple() })
      const r = await stack.api(`/api/projects/1/feature_flags/${f.id}/`, { method: 'DELETE' })
      expect(r.status).toBe(405)
      expect(await json(r)).toEqual({ type: 'invalid_request', code: 'method_not_allowed', detail: 'Method "DELETE" not allowed.', attr: null })
      expect((await json(stack.api(`/api/projects/1/feature_flags/${f.id}/`))).deleted).toBe(false)
    })

    test('local_evaluation: every flag not deleted (inactive ones too), group types, ETag and 304', async () => {
      await insertGroupType(stack.services.db.sql, 'company', 0)
      const on = await createFlag(stack, { key: 'le-on', filters: simple() })
      const off = await createFlag(stack, { key: 'le-off', filters: simple(), active: false })
      const gone = await createFlag(stack, { key: 'le-gone', filters: simple() })
      await patch(gone.id, { deleted: true })
      const legacy = stack.api(`/api/feature_flag/local_evaluation?token=${PROJECT_KEY}&send_cohorts`)
      const r = await legacy
      expect(r.status).toBe(200)
      expect(r.headers.get('cache-control')).toBe('private, must-revalidate')
      const etag = r.headers.get('etag')!
      expect(etag).toMatch(/^W\/"[0-9a-f]+"$/)
      const body = await json(r)
      expect(Object.keys(body).sort()).toEqual(['cohorts', 'flags', 'group_type_mapping'])
      expect(body.cohorts).toEqual({})
      expect(body.group_type_mapping).toEqual({ '0': 'company' })
      const byKey = Object.fromEntries(body.flags.map((f: { key: string }) => [f.key, f]))
      expect(byKey['le-on']).toEqual({
        id: on.id,
        team_id: 1,
        name: '',
        key: 'le-on',
        filters: simple(),
        deleted: false,
        active: true,
        ensure_experience_continuity: false,
        has_encrypted_payloads: false,
        version: 1,
        evaluation_runtime: 'all',
        evaluation_tags: [],
      })
      expect(byKey['le-off']).toMatchObject({ id: off.id, active: false })
      expect(byKey['le-gone']).toBeUndefined()
      const bare = etag.slice(3, -1)
      for (const inm of [etag, `"${bare}"`, bare, `"other", ${etag}`]) {
        const cached = await stack.api(`/api/feature_flag/local_evaluation?token=${PROJECT_KEY}`, { headers: { 'if-none-match': inm } })
        expect(cached.status).toBe(304)
        expect(cached.headers.get('etag')).toBe(etag)
        expect(await cached.text()).toBe('')
      }
      const byPath = await stack.api('/api/projects/@current/feature_flags/local_evaluation', { headers: { 'if-none-match': etag } })
      expect(byPath.status).toBe(304)
      // posthog-node 5 asks at /flags/definitions
      const v5 = await stack.api(`/flags/definitions?token=${PROJECT_KEY}&send_cohorts`)
      expect(v5.status).toBe(200)
      expect(v5.headers.get('etag')).toBe(etag)
      expect((await json(v5)).flags.map((f: { key: string }) => f.key)).toEqual(body.flags.map((f: { key: string }) => f.key))
      await patch(off.id, { active: true })
      const changed = await stack.api(`/api/feature_flag/local_evaluation?token=${PROJECT_KEY}`, { headers: { 'if-none-match': etag } })
      expect(changed.status).toBe(200)
      expect(changed.headers.get('etag')).not.toBe(etag)
      expect((await json(changed)).flags.find((f: { key: string }) => f.key === 'le-off').active).toBe(true)
    })

    test('local_evaluation: unknown token 401, project of another organization 403, no key 401', async () => {
      const unknown = await stack.api('/api/feature_flag/local_evaluation?token=phc_nobody_has_this_one')
      expect(unknown.status).toBe(401)
      expect(await json(unknown)).toEqual({ type: 'authentication_error', code: 'authentication_failed', detail: 'Incorrect authentication credentials.', attr: null })
      const sql = stack.services.db.sql
      const [org] = await sql`insert into organizations (name) values ('Another') returning id`
      const other = await createProject(sql, { name: 'Theirs', organizationId: org.id })
      stack.services.tokens.add(other.api_token, other.id)
      const forbidden = await stack.api(`/api/feature_flag/local_evaluation?token=${other.api_token}`)
      expect(forbidden.status).toBe(403)
      expect(await json(forbidden)).toMatchObject({ type: 'authentication_error', code: 'permission_denied' })
      const anonymous = await stack.app.handle(new Request(`${BASE}/api/feature_flag/local_evaluation?token=${PROJECT_KEY}`))
      expect(anonymous.status).toBe(401)
      // a key of a user in that organization reads it
      const { key } = await createPersonalKey(sql, { label: 'theirs', email: 'owner@another.org' })
      await sql`delete from organization_members where user_id = (select id from users where email = 'owner@another.org')`
      await sql`insert into organization_members (organization_id, user_id) select ${org.id}, id from users where email = 'owner@another.org'`
      const theirs = await stack.api(`/api/feature_flag/local_evaluation?token=${other.api_token}`, { headers: { authorization: `Bearer ${key}` } })
      expect(theirs.status).toBe(200)
      expect((await json(theirs)).flags).toEqual([])
    })
  })
}
