// The cohorts REST API through HTTP, on real Postgres and on the embedded one: shapes, static members (JSON and
// CSV), PostHog's refusals with their messages, and project isolation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { createFlag, insertPerson } from '../helpers/flags'
import { BASE, json, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const person = (key: string, value: unknown, operator = 'exact') => ({ key, type: 'person', value, operator })
const nested = (id: number) => ({ key: 'id', type: 'cohort', value: id })
const tree = (...filters: unknown[]) => ({ properties: { type: 'OR', values: [{ type: 'AND', values: filters }] } })
const behavioural = { key: '$pageview', type: 'behavioral', value: 'performed_event', event_type: 'events' }
const onCohort = (id: number) => ({ groups: [{ properties: [{ key: 'id', type: 'cohort', value: id }], rollout_percentage: 100 }] })

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`cohorts API on ${postgres} Postgres`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(() => stack?.close())

    const sql = () => stack.services.db.sql
    const create = async (body: unknown, project = '1') => {
      const r = await stack.api(`/api/projects/${project}/cohorts/`, { method: 'POST', json: body })
      const out = await json(r)
      if (r.status !== 201) throw new Error(`create cohort: ${r.status} ${JSON.stringify(out)}`)
      return out
    }
    const patch = (id: number, body: unknown) => stack.api(`/api/projects/1/cohorts/${id}/`, { method: 'PATCH', json: body })
    const upload = (csv: string, fields: Record<string, string> = {}, method = 'POST', path = '/api/projects/1/cohorts/') => {
      const form = new FormData()
      for (const [k, v] of Object.entries(fields)) form.append(k, v)
      form.append('csv', new File([csv], 'ids.csv', { type: 'text/csv' }))
      return stack.api(path, { method, body: form })
    }
    const members = async (id: number) => (await json(stack.api(`/api/projects/1/cohorts/${id}/persons/`))).results.map((p: { distinct_ids: string[] }) => p.distinct_ids[0]).sort()
    const expectError = async (r: Response | Promise<Response>, status: number, detail: string, attr: string | null = null, code = 'invalid_input') => {
      const res = await r
      const body = await json(res)
      expect({ status: res.status, ...body }).toEqual({ status, type: status === 404 ? 'invalid_request' : 'validation_error', code: status === 404 ? 'not_found' : code, detail, attr })
    }

    test('create, retrieve, list and PATCH: PostHog fields; deleted cohorts leave the list but can be read; DELETE is 405', async () => {
      const filters = tree(person('plan', 'pro'))
      const c = await create({ name: 'Pro users', description: 'paying', filters })
      expect(c).toMatchObject({ name: 'Pro users', description: 'paying', filters, groups: [], deleted: false, is_static: false, is_calculating: false, count: null, cohort_type: 'person_property' })
      expect(typeof c.id).toBe('number')
      expect(c.created_at).toMatch(/Z$/)
      expect(c.created_by).toMatchObject({ email: 'admin@localhost' })
      // a retrieve computes a dynamic cohort's size now (no person has plan pro here), and the list shows it after
      expect(await json(stack.api(`/api/projects/1/cohorts/${c.id}/`))).toEqual({ ...c, count: 0 })
      expect(await json(stack.api(`/api/projects/1/cohorts/${c.id}`))).toEqual({ ...c, count: 0 })
      const later = await create({ name: 'Later', is_static: true })
      const list = await json(stack.api('/api/projects/1/cohorts/?limit=1000'))
      expect(Object.keys(list)).toEqual(['count', 'next', 'previous', 'results'])
      const ids = list.results.map((x: { id: number }) => x.id)
      expect(ids.indexOf(later.id)).toBeLessThan(ids.indexOf(c.id))
      expect((await json(stack.api('/api/projects/1/cohorts/?type=static'))).results.every((x: { is_static: boolean }) => x.is_static)).toBe(true)
      expect((await json(stack.api('/api/projects/1/cohorts/?search=PRO%20us'))).results.map((x: { id: number }) => x.id)).toEqual([c.id])
      const renamed = await json(patch(c.id, { name: 'Pros', filters: tree(person('plan', 'team')) }))
      expect(renamed).toMatchObject({ id: c.id, name: 'Pros', filters: tree(person('plan', 'team')), version: 2 })
      expect(await json(patch(c.id, { deleted: true }))).toMatchObject({ deleted: true })
      expect((await json(stack.api('/api/projects/1/cohorts/?limit=1000'))).results.map((x: { id: number }) => x.id)).not.toContain(c.id)
      expect(await json(stack.api(`/api/projects/1/cohorts/${c.id}/`))).toMatchObject({ deleted: true })
      expect(await json(patch(c.id, { deleted: false }))).toMatchObject({ deleted: false })
      const del = await stack.api(`/api/projects/1/cohorts/${c.id}/`, { method: 'DELETE' })
      expect(del.status).toBe(405)
      expect(await json(del)).toMatchObject({ code: 'method_not_allowed' })
      expect((await stack.api('/api/projects/1/cohorts/999999/')).status).toBe(404)
    })

    test("a dynamic cohort's size: computed when it is read, shown in the list since, cleared by an edit", async () => {
      const key = `size_${crypto.randomUUID().slice(0, 8)}`
      for (let i = 0; i < 5; i++) await insertPerson(sql(), [`${key}-${i}`], { [key]: i < 3 ? 'yes' : 'no' })
      const c = await create({ name: 'Sized', filters: tree(person(key, 'yes')) })
      expect(c.count).toBeNull()
      expect((await json(stack.api(`/api/projects/1/cohorts/${c.id}/`))).count).toBe(3)
      const listed = (await json(stack.api('/api/projects/1/cohorts/?limit=1000'))).results.find((x: { id: number }) => x.id === c.id)
      expect(listed.count).toBe(3)
      expect((await members(c.id)).length).toBe(3)
      expect((await json(patch(c.id, { filters: tree(person(key, 'no')) }))).count).toBeNull()
      expect((await json(stack.api(`/api/projects/1/cohorts/${c.id}/`))).count).toBe(2)
    })

    test('filters are checked: a person filter needs an operator; properties are required', async () => {
      const r = stack.api('/api/projects/1/cohorts/', { method: 'POST', json: { name: 'x', filters: tree({ key: 'plan', type: 'person', value: 'pro' }) } })
      await expectError(r, 400, 'Missing required keys for person filter: operator', 'filters')
      await expectError(stack.api('/api/projects/1/cohorts/', { method: 'POST', json: { name: 'x', filters: { groups: [] } } }), 400, "Must contain a 'properties' key with type and values", 'filters')
    })

    test('a loop of nested cohorts is refused on PATCH; so is a nested id the project does not have', async () => {
      const c = await create({ name: 'C', filters: tree(person('a', 1)) })
      const b = await create({ name: 'B', filters: tree(nested(c.id)) })
      const a = await create({ name: 'A', filters: tree(nested(b.id)) })
      await expectError(patch(c.id, { filters: tree(nested(a.id)) }), 400, 'Cohorts cannot reference other cohorts in a loop.')
      await expectError(patch(a.id, { filters: tree(nested(a.id)) }), 400, 'Cohorts cannot reference other cohorts in a loop.')
      await expectError(patch(a.id, { filters: tree(nested(987654)) }), 400, 'Invalid Cohort ID in filter')
      // nothing was written
      expect((await json(stack.api(`/api/projects/1/cohorts/${c.id}/`))).filters).toEqual(tree(person('a', 1)))
    })

    test('a cohort an active flag uses, directly or through another cohort, cannot be deleted; an inactive flag does not block', async () => {
      const inner = await create({ name: 'Inner', filters: tree(person('plan', 'pro')) })
      const outer = await create({ name: 'Outer', filters: tree(nested(inner.id)) })
      const flag = await createFlag(stack, { key: 'uses-outer', name: 'Uses outer', filters: onCohort(outer.id) })
      const message = 'This cohort is used in 1 active feature flag(s): Uses outer. Please remove the cohort from these feature flags before deleting it.'
      await expectError(patch(outer.id, { deleted: true }), 400, message)
      await expectError(patch(inner.id, { deleted: true }), 400, message)
      // adding behavioural filters to a cohort a flag uses is refused too
      await expectError(patch(inner.id, { filters: tree(behavioural) }), 400, 'Behavioral filters cannot be added to cohorts used in feature flags.', 'filters', 'behavioral_cohort_found')
      const viewers = await create({ name: 'Viewers', filters: tree(behavioural) })
      await expectError(
        patch(inner.id, { filters: tree(nested(viewers.id)) }),
        400,
        "A cohort dependency (Viewers) has filters based on events. These cohorts can't be used in feature flags.",
        'filters',
        'behavioral_cohort_found',
      )
      await stack.api(`/api/projects/1/feature_flags/${flag.id}/`, { method: 'PATCH', json: { active: false } })
      expect((await patch(inner.id, { deleted: true })).status).toBe(200)
    })

    test('static cohorts: members by person uuid on create, added and removed; /persons/ lists them', async () => {
      const p1 = await insertPerson(sql(), ['static-1', 'static-1-alias'], { email: 's1@x.org' })
      await insertPerson(sql(), ['static-2'], {})
      const [{ uuid: u1 }] = await sql()`select uuid::text from persons where id = ${p1}`
      const [{ uuid: u2 }] = await sql()`select p.uuid::text from persons p join person_distinct_ids d on d.person_id = p.id where d.distinct_id = 'static-2'`
      const c = await create({ name: 'Hand-picked', is_static: true, _create_static_person_ids: [u1, crypto.randomUUID(), 'not-a-uuid'] })
      expect(c).toMatchObject({ is_static: true, count: 1, cohort_type: 'static' })
      expect(await members(c.id)).toEqual(['static-1'])
      const persons = await json(stack.api(`/api/projects/1/cohorts/${c.id}/persons/`))
      expect(persons.results[0]).toMatchObject({ uuid: u1, distinct_ids: ['static-1', 'static-1-alias'], properties: { email: 's1@x.org' } })
      expect(persons).toMatchObject({ next: null, previous: null })

      const add = (body: unknown, id = c.id) => stack.api(`/api/projects/1/cohorts/${id}/add_persons_to_static_cohort/`, { method: 'PATCH', json: body })
      expect(await json(add({ person_ids: [u2] }))).toEqual({ success: true })
      expect(await members(c.id)).toEqual(['static-1', 'static-2'])
      expect((await json(stack.api(`/api/projects/1/cohorts/${c.id}/`))).count).toBe(2)
      await expectError(add({ person_ids: 'x' }), 400, 'person_ids must be a list')
      await expectError(add({ person_ids: [] }), 400, 'person_ids cannot be empty')
      await expectError(add({ person_ids: Array.from({ length: 1001 }, () => u1) }), 400, 'List size exceeds limit')
      await expectError(add({ person_ids: [crypto.randomUUID()] }), 400, 'No valid users to add to cohort')
      const dynamic = await create({ name: 'Dyn', filters: tree(person('a', 1)) })
      await expectError(add({ person_ids: [u1] }, dynamic.id), 400, 'Can only add users to static cohorts')
      expect((await stack.api(`/api/projects/1/cohorts/${c.id}/add_persons_to_static_cohort/`, { method: 'POST', json: { person_ids: [u1] } })).status).toBe(405)

      const remove = (body: unknown, id = c.id) => stack.api(`/api/projects/1/cohorts/${id}/remove_person_from_static_cohort/`, { method: 'PATCH', json: body })
      expect(await json(remove({ person_id: u2 }))).toEqual({ success: true })
      expect(await members(c.id)).toEqual(['static-1'])
      await expectError(remove({ person_id: u2 }), 404, 'Person is not part of the cohort')
      await expectError(remove({ person_id: crypto.randomUUID() }), 404, "Person with this UUID does not exist in the cohort's team")
      await expectError(remove({}), 400, 'person_id is required')
      await expectError(remove({ person_id: 7 }), 400, 'person_id must be a string')
      await expectError(remove({ person_id: 'nope' }), 400, 'person_id must be a valid UUID')
      await expectError(remove({ person_id: u1 }, dynamic.id), 400, 'Can only remove users from static cohorts')
    })

    test('CSV upload: one column of distinct ids (the first row included), headed columns, PATCH adds rows; unknown ids are skipped and named', async () => {
      const pa = await insertPerson(sql(), ['csv-a', 'csv-a-alias'], { email: 'a@csv.org' })
      await insertPerson(sql(), ['csv-b'], { email: 'b@csv.org' })
      await insertPerson(sql(), ['csv-c'], {})
      const r = await upload('\n\ncsv-a-alias\nnobody\n"csv-b"\n', { name: 'From CSV', is_static: 'true' })
      expect(r.status).toBe(201)
      const c = await json(r)
      expect(c).toMatchObject({ name: 'From CSV', is_static: true, count: 2, csv_skipped: { count: 1, ids: ['nobody'] } })
      expect(await members(c.id)).toEqual(['csv-a', 'csv-b'])
      // only an upload's answer names skipped ids
      expect(await json(stack.api(`/api/projects/1/cohorts/${c.id}/`))).not.toHaveProperty('csv_skipped')
      // PATCH with another file adds its rows
      const [{ uuid }] = await sql()`select uuid::text from persons where id = ${pa}`
      expect((await upload('distinct_id,name\ncsv-c,Cee\n,blank\n', {}, 'PATCH', `/api/projects/1/cohorts/${c.id}/`)).status).toBe(200)
      expect(await members(c.id)).toEqual(['csv-a', 'csv-b', 'csv-c'])
      // person uuids and emails, by their headers
      const missing = crypto.randomUUID()
      const byUuid = await json(upload(`person_id\n${uuid.toUpperCase()}\n${missing}\nnot-a-uuid\n`, { name: 'By uuid', is_static: 'true' }))
      expect(await members(byUuid.id)).toEqual(['csv-a'])
      expect(byUuid.csv_skipped).toEqual({ count: 2, ids: [missing, 'not-a-uuid'] })
      const byEmail = await json(upload('email\nb@csv.org\nnobody@csv.org\n', { name: 'By email', is_static: 'true' }))
      expect(await members(byEmail.id)).toEqual(['csv-b'])
      expect(byEmail.csv_skipped).toEqual({ count: 1, ids: ['nobody@csv.org'] })
      // 20,000 unknown ids: all counted, the first 100 named
      const many = await json(upload(Array.from({ length: 20_000 }, (_, i) => `ghost-${i}`).join('\n'), { name: 'Ghosts', is_static: 'true' }))
      expect(many.count).toBe(0)
      expect(many.csv_skipped.count).toBe(20_000)
      expect(many.csv_skipped.ids).toEqual(Array.from({ length: 100 }, (_, i) => `ghost-${i}`))
      // refusals name the csv field
      await expectError(upload('\n\n', { name: 'Empty', is_static: 'true' }), 400, 'CSV file is empty. Please upload a CSV file with at least one row of data.', 'csv')
      await expectError(
        upload('person_id\n\n', { name: 'Header only', is_static: 'true' }),
        400,
        'CSV file contains no valid person IDs, distinct IDs, or email addresses. Please ensure your file has data rows with person IDs, distinct IDs, or email addresses.',
        'csv',
      )
      await expectError(
        upload('name,age\nx,1\n', { name: 'No id column', is_static: 'true' }),
        400,
        "Multi-column CSV must contain at least one column with a supported ID header: 'person_id', 'Person .id' (PostHog export format), 'distinct_id', 'distinct-id', or 'email'. Found columns: name, age",
        'csv',
      )
      // a bad file creates nothing
      expect((await json(stack.api('/api/projects/1/cohorts/?search=Empty'))).count).toBe(0)
    })

    test('projects are isolated: another project cohort cannot be read, changed, nor named by a flag', async () => {
      const [org] = await sql()`insert into organizations (name) values ('Elsewhere') returning id`
      const other = await createProject(sql(), { name: 'Not yours', organizationId: org.id })
      const [{ id: theirs }] = await sql()`
        insert into cohorts (team_id, name, filters) values (${other.id}, 'Theirs', ${sql().json(tree(person('plan', 'pro')) as never)}) returning id`
      expect((await stack.api(`/api/projects/1/cohorts/${theirs}/`)).status).toBe(404)
      expect((await patch(theirs, { name: 'mine now' })).status).toBe(404)
      expect((await stack.api(`/api/projects/${other.id}/cohorts/`)).status).toBe(404)
      expect((await json(stack.api('/api/projects/1/cohorts/?limit=1000'))).results.map((c: { id: number }) => c.id)).not.toContain(theirs)
      const r = await stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'steal', filters: onCohort(theirs) } })
      expect(await json(r)).toEqual({ type: 'validation_error', code: 'cohort_does_not_exist', detail: `Cohort with id ${theirs} does not exist`, attr: 'filters' })
      // nesting it is refused as an unknown id
      const mine = await create({ name: 'Mine', filters: tree(person('a', 1)) })
      await expectError(patch(mine.id, { filters: tree(nested(theirs)) }), 400, 'Invalid Cohort ID in filter')
    })

    test('flag validation: behavioural cohorts and dependency rules, with PostHog messages', async () => {
      const viewers = await create({ name: 'Page viewers', filters: tree(behavioural) })
      const r = await stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'viewers', filters: onCohort(viewers.id) } })
      expect(await json(r)).toEqual({
        type: 'validation_error',
        code: 'behavioral_cohort_found',
        detail: "Cohort 'Page viewers' with filters on events cannot be used in feature flags.",
        attr: 'filters',
      })
      // a deleted cohort of the project is accepted (PostHog looks cohorts up deleted or not); it never matches
      const gone = await create({ name: 'Gone', filters: tree(person('plan', 'pro')) })
      expect((await patch(gone.id, { deleted: true })).status).toBe(200)
      expect((await stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'on-gone', filters: onCohort(gone.id) } })).status).toBe(201)
      const on = (id: number, value: unknown = true) => ({ groups: [{ properties: [{ key: String(id), type: 'flag', value, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }] })
      const a = await createFlag(stack, { key: 'flag_a', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } })
      const b = await createFlag(stack, { key: 'flag_b', filters: on(a.id) })
      const c = await createFlag(stack, { key: 'flag_c', filters: on(b.id) })
      const patchFlag = (id: number, body: unknown) => stack.api(`/api/projects/1/feature_flags/${id}/`, { method: 'PATCH', json: body })
      await expectError(patchFlag(a.id, { filters: on(c.id) }), 400, 'Circular dependency detected: flag_a → flag_c → flag_b → flag_a', 'filters')
      await expectError(patchFlag(a.id, { filters: on(a.id) }), 400, "Feature flag 'flag_a' cannot depend on itself", 'filters')
      await expectError(
        stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'by_key', filters: { groups: [{ properties: [{ key: 'flag_a', type: 'flag', value: true, operator: 'flag_evaluates_to' }] }] } } }),
        400,
        "Flag dependencies must reference flag IDs (integers), not flag keys. Invalid reference: 'flag_a'",
        'filters',
      )
      await expectError(
        stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'wrong_op', filters: { groups: [{ properties: [{ key: String(a.id), type: 'flag', value: true, operator: 'exact' }] }] } } }),
        400,
        "Flag properties must use the 'flag_evaluates_to' operator",
        'filters',
      )
      await expectError(stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'ghost', filters: on(999999) } }), 400, 'Flag dependency references non-existent flag with ID 999999', 'filters')
      await expectError(patchFlag(a.id, { active: false }), 400, `Cannot disable this feature flag because other flags depend on it: flag_b (ID: ${b.id}). Please update or disable the dependent flags first.`)
      await expectError(patchFlag(a.id, { deleted: true }), 400, `Cannot delete this feature flag because other flags depend on it: flag_b (ID: ${b.id}). Please update or delete the dependent flags first.`)
      // bottom-up works: disable c, then b, then a; then depending on a disabled flag is refused, and so is enabling b
      expect((await patchFlag(c.id, { active: false })).status).toBe(200)
      expect((await patchFlag(b.id, { active: false })).status).toBe(200)
      expect((await patchFlag(a.id, { active: false })).status).toBe(200)
      await expectError(
        stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'on_disabled', filters: on(a.id) } }),
        400,
        `Cannot create dependency on disabled flag 'flag_a' (ID: ${a.id}). Flag dependencies must reference active flags only.`,
        'filters',
      )
      await expectError(patchFlag(b.id, { active: true }), 400, `Cannot enable this feature flag because it depends on disabled flags: flag_a (ID: ${a.id}). Please enable the dependency flags first.`)
    })

    test('the OpenAPI document lists the cohort routes', async () => {
      const doc = await json(stack.app.handle(new Request(`${BASE}/swagger/json`)))
      for (const path of ['/api/projects/{project_id}/cohorts/', '/api/projects/{project_id}/cohorts/{id}/', '/api/projects/{project_id}/cohorts/{id}/persons/']) {
        expect(doc.paths[path]).toBeDefined()
      }
      expect(doc.components.schemas.Cohort.properties.filters).toBeDefined()
    })
  })
}
