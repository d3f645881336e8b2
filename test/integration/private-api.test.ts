// Personal-key authentication and the projects API, on real Postgres and on the embedded one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createPersonalKey, createProject } from '../../src/projects/repository'
import { json, PERSONAL_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`private API on ${postgres} Postgres`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(() => stack?.close())

    test('a good key lists the projects of its organizations', async () => {
      const r = await stack.api('/api/projects/')
      expect(r.status).toBe(200)
      const body = await json(r)
      expect(body).toMatchObject({ count: 1, next: null, previous: null })
      expect(body.results[0]).toMatchObject({ id: 1, name: 'Default project' })
      expect(body.results[0].api_token_hint).toMatch(/^phc_\.\.\./)
    })

    test('@current, a numeric id and the trailing slash all resolve', async () => {
      for (const path of ['/api/projects/@current/', '/api/projects/@current', '/api/projects/1', '/api/projects/1/']) {
        const r = await stack.api(path)
        expect(r.status).toBe(200)
        expect((await json(r)).id).toBe(1)
      }
    })

    test('no key is 401 not_authenticated', async () => {
      const r = await stack.app.handle(new Request('http://localhost/api/projects/'))
      expect(r.status).toBe(401)
      expect(await json(r)).toEqual({
        type: 'authentication_error',
        code: 'not_authenticated',
        detail: 'Authentication credentials were not provided.',
        attr: null,
      })
    })

    test('an unknown key is 401 invalid_personal_api_key, in the header or the query string', async () => {
      const r = await stack.api('/api/projects/', { headers: { authorization: 'Bearer phx_not_a_real_key_at_all' } })
      expect(r.status).toBe(401)
      expect(await json(r)).toMatchObject({ type: 'authentication_error', code: 'invalid_personal_api_key', attr: null })
      const q = await stack.app.handle(new Request('http://localhost/api/projects/?personal_api_key=phx_nope_nope'))
      expect(q.status).toBe(401)
      expect((await json(q)).detail).toContain('query string')
    })

    test('a key works from the query string and with extra spaces', async () => {
      const q = await stack.app.handle(new Request(`http://localhost/api/projects/?personal_api_key=${PERSONAL_KEY}`))
      expect(q.status).toBe(200)
      const h = await stack.api('/api/projects/', { headers: { authorization: `Bearer   ${PERSONAL_KEY}  ` } })
      expect(h.status).toBe(200)
    })

    test('a project of another organization is 404, never its data', async () => {
      const sql = stack.services.db.sql
      const [org] = await sql`insert into organizations (name) values ('Other org') returning id`
      const other = await createProject(sql, { name: 'Secret project', organizationId: org.id })
      const r = await stack.api(`/api/projects/${other.id}/`)
      expect(r.status).toBe(404)
      expect(await json(r)).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Project not found.', attr: null })
      const list = await json(stack.api('/api/projects/'))
      expect(list.results.map((p: { name: string }) => p.name)).not.toContain('Secret project')
      // and a key of that organization's user cannot see ours
      const { key } = await createPersonalKey(sql, { label: 'other', email: 'someone@other.org' })
      await sql`delete from organization_members where user_id = (select id from users where email = 'someone@other.org')`
      await sql`insert into organization_members (organization_id, user_id) select ${org.id}, id from users where email = 'someone@other.org'`
      const theirs = await stack.api('/api/projects/1/', { headers: { authorization: `Bearer ${key}` } })
      expect(theirs.status).toBe(404)
      const own = await stack.api(`/api/projects/${other.id}/`, { headers: { authorization: `Bearer ${key}` } })
      expect(own.status).toBe(200)
    })

    test('bad ids and bad parameters get clear errors', async () => {
      expect((await stack.api('/api/projects/abc/')).status).toBe(404)
      const r = await stack.api('/api/projects/?limit=0')
      expect(r.status).toBe(400)
      expect(await json(r)).toMatchObject({ type: 'validation_error', attr: 'limit' })
      const s = await stack.api('/api/projects/?limit=abc')
      expect((await json(s)).attr).toBe('limit')
    })

    test('pages link to each other with absolute URLs', async () => {
      for (let i = 0; i < 3; i++) await createProject(stack.services.db.sql, { name: `extra ${i}` })
      const first = await json(stack.api('/api/projects/?limit=2'))
      expect(first.count).toBeGreaterThanOrEqual(4)
      expect(first.next).toBe('http://localhost/api/projects/?limit=2&offset=2')
      const second = await json(stack.api(new URL(first.next).pathname + new URL(first.next).search))
      expect(second.previous).toBe('http://localhost/api/projects/?limit=2')
    })

    test('last use of a key is recorded', async () => {
      await stack.api('/api/projects/')
      await Bun.sleep(50)
      const [row] = await stack.services.db.sql`select last_used_at from personal_api_keys where label = 'bootstrap'`
      expect(row.last_used_at).toBeInstanceOf(Date)
    })

    test('unknown routes answer the error shape', async () => {
      const r = await stack.api('/api/nothing-here/')
      expect(r.status).toBe(404)
      expect(await json(r)).toEqual({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
    })
  })
}
