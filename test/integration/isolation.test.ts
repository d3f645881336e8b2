// Tenant isolation: a personal key of organization A never reads or changes anything of organization B's
// project, on any private endpoint — and B's data, read back with B's own key, is there and unchanged.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createPersonalKey, createProject, ensureUser } from '../../src/projects/repository'
import { BASE, json, PERSONAL_KEY, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const PROJECT_NOT_FOUND = { type: 'invalid_request', code: 'not_found', detail: 'Project not found.', attr: null }
const NOT_FOUND = { type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null }
const NO_ACCESS = { type: 'authentication_error', code: 'permission_denied', detail: "You don't have access to the project.", attr: null }
const simple = (rollout: number) => ({ groups: [{ properties: [], rollout_percentage: rollout }] })

interface Call {
  method?: string
  path: string
  json?: unknown
  headers?: Record<string, string>
}

const combos: { postgres: StoreChoice; clickhouse: StoreChoice }[] = [
  { postgres: 'real', clickhouse: 'real' },
  { postgres: 'embedded', clickhouse: 'embedded' },
]

for (const stores of combos) {
  describe(`organization isolation (${stores.postgres} Postgres, ${stores.clickhouse} event store)`, () => {
    let stack: Stack
    let b: { id: number; token: string; key: string }
    let flagB: any
    let definitionB: any
    let flagA: any
    let definitionA: any
    let before: Awaited<ReturnType<typeof snapshotOfB>>

    const asB = (path: string, init: RequestInit & { json?: unknown } = {}) =>
      stack.api(path, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${b.key}` } })

    /** A's key (the stack's default) makes each call; every answer must be exactly `status` and `body`. */
    async function expectAll(calls: Call[], status: number, body: unknown) {
      for (const call of calls) {
        const r = await stack.api(call.path, { method: call.method ?? 'GET', json: call.json, headers: call.headers })
        const text = await r.text()
        let got: unknown = text
        try {
          got = JSON.parse(text)
        } catch {
          // keep the text: the comparison below shows it
        }
        expect({ call, status: r.status, body: got }).toEqual({ call, status, body })
      }
    }

    async function capture(token: string, batch: Record<string, unknown>[]) {
      const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: token, batch }) }))
      expect(r.status).toBe(200)
    }

    /** Until the flush worker has stored and learned everything captured so far. */
    async function landed(ms = 20_000) {
      const deadline = Date.now() + ms
      while (Date.now() < deadline) {
        const s = stack.services.captureLog.stats()
        if (s.consumers.learn?.position === s.lastSeq && s.consumers.store?.position === s.lastSeq) return
        await Bun.sleep(25)
      }
      throw new Error(`not landed in time: ${JSON.stringify(stack.services.captureLog.stats())}`)
    }

    /** Everything of B's, as B's own key sees it. */
    async function snapshotOfB() {
      const read = async (path: string) => {
        const r = await asB(path)
        expect({ path, status: r.status }).toEqual({ path, status: 200 })
        return { body: await json(r), etag: r.headers.get('etag') }
      }
      return {
        project: (await read(`/api/projects/${b.id}/`)).body,
        flags: (await read(`/api/projects/${b.id}/feature_flags/`)).body,
        flag: (await read(`/api/projects/${b.id}/feature_flags/${flagB.id}/`)).body,
        localEvaluation: await read(`/api/feature_flag/local_evaluation?token=${b.token}`),
        definitions: (await read(`/api/projects/${b.id}/event_definitions/`)).body,
        definition: (await read(`/api/projects/${b.id}/event_definitions/${definitionB.id}/`)).body,
        events: (await read(`/api/projects/${b.id}/events/`)).body,
        persons: (await read(`/api/projects/${b.id}/persons/?distinct_id=shared-user`)).body,
      }
    }

    beforeAll(async () => {
      stack = await startStack(stores, { FLUSH_INTERVAL_MS: 20 })
      const sql = stack.services.db.sql
      // Organization B: its own project, and a user (member of B only) with a personal key.
      const [org] = await sql`insert into organizations (name) values ('Organization B') returning id`
      const project = await createProject(sql, { name: 'B secret project', organizationId: org.id })
      await ensureUser(sql, { email: 'owner@b.example', organizationId: org.id })
      const { key } = await createPersonalKey(sql, { label: 'b', email: 'owner@b.example' })
      stack.services.tokens.add(project.api_token, project.id)
      b = { id: project.id, token: project.api_token, key }

      // B's data: a flag through its API, events (and so persons and definitions) through capture.
      const created = await asB(`/api/projects/${b.id}/feature_flags/`, { method: 'POST', json: { key: 'b-secret-flag', name: 'B only', filters: simple(42) } })
      expect(created.status).toBe(201)
      flagB = await json(created)
      await capture(b.token, [
        { event: 'b secret event', properties: { distinct_id: 'shared-user', $set: { email: 'b-user@b.example', plan: 'b-plan' } } },
        { event: 'b secret event', properties: { distinct_id: 'b-only-user' } },
      ])
      // A's own data, with a distinct id B uses too.
      flagA = await json(stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'a-flag', filters: simple(10) } }))
      await capture(PROJECT_KEY, [{ event: 'a event', properties: { distinct_id: 'shared-user', $set: { email: 'a-user@a.example' } } }])
      await landed()
      // the query API's person mapping is copied where the events are within a second: wait for B's events to carry it
      for (let i = 0; i < 100; i++) {
        const events = await json(asB(`/api/projects/${b.id}/events/`))
        if (events.results.length > 0 && events.results.every((e: { person_id: string | null }) => e.person_id !== null)) break
        await Bun.sleep(100)
      }
      definitionB = (await json(asB(`/api/projects/${b.id}/event_definitions/?search=secret`))).results[0]
      definitionA = (await json(stack.api('/api/projects/1/event_definitions/?search=a%20event'))).results[0]
      expect(definitionB).toMatchObject({ name: 'b secret event' })
      expect(definitionA).toMatchObject({ name: 'a event' })
      before = await snapshotOfB()
    })
    afterAll(() => stack?.close())

    test('B’s data exists, read with B’s key', () => {
      const s = before as any
      expect(s.project).toMatchObject({ id: b.id, name: 'B secret project' })
      expect(s.flags.results.map((f: { key: string }) => f.key)).toEqual(['b-secret-flag'])
      expect(s.flag).toMatchObject({ id: flagB.id, key: 'b-secret-flag', name: 'B only', version: 1, rollout_percentage: 42, deleted: false })
      expect(s.localEvaluation.body.flags.map((f: { key: string; team_id: number }) => [f.key, f.team_id])).toEqual([['b-secret-flag', b.id]])
      expect(s.definitions.results.map((d: { name: string }) => d.name)).toEqual(['b secret event'])
      expect(s.definition).toMatchObject({ id: definitionB.id, name: 'b secret event', tags: [], post_to_chat: false })
      expect(s.events.results.map((e: { event: string; distinct_id: string }) => `${e.event}/${e.distinct_id}`).sort()).toEqual(['b secret event/b-only-user', 'b secret event/shared-user'])
      expect(s.persons.results).toHaveLength(1)
      expect(s.persons.results[0].properties).toMatchObject({ email: 'b-user@b.example', plan: 'b-plan' })
    })

    test('projects: A’s listing holds only A’s project, B’s only B’s; /api/projects/<B>/ is 404 for A', async () => {
      const mine = await json(stack.api('/api/projects/'))
      expect(mine.count).toBe(1)
      expect(mine.results.map((p: { id: number }) => p.id)).toEqual([1])
      expect(JSON.stringify(mine)).not.toContain('B secret project')
      const theirs = await json(asB('/api/projects/'))
      expect(theirs.results.map((p: { id: number }) => p.id)).toEqual([b.id])
      await expectAll([{ path: `/api/projects/${b.id}/` }, { path: `/api/projects/${b.id}` }], 404, PROJECT_NOT_FOUND)
      // and the other way round
      const r = await asB('/api/projects/1/')
      expect(r.status).toBe(404)
      expect(await json(r)).toEqual(PROJECT_NOT_FOUND)
    })

    test('events API: B’s project is 404 for A, by header or query-string key; a shared distinct id shows only A’s events', async () => {
      await expectAll(
        [
          { path: `/api/projects/${b.id}/events/` },
          { path: `/api/projects/${b.id}/events/?distinct_id=shared-user` },
          { path: `/api/projects/${b.id}/events/?event=b%20secret%20event` },
          { path: `/api/projects/${b.id}/events/?personal_api_key=${PERSONAL_KEY}`, headers: { authorization: '' } },
        ],
        404,
        PROJECT_NOT_FOUND,
      )
      const own = await json(stack.api('/api/projects/1/events/?distinct_id=shared-user'))
      expect(own.results.map((e: { event: string }) => e.event)).toEqual(['a event'])
      expect((await json(stack.api('/api/projects/1/events/?event=b%20secret%20event'))).results).toEqual([])
      expect((await json(stack.api('/api/projects/1/events/?distinct_id=b-only-user'))).results).toEqual([])
    })

    test('persons API: B’s project is 404 for A; A’s person with a shared distinct id is A’s alone', async () => {
      await expectAll(
        [{ path: `/api/projects/${b.id}/persons/?distinct_id=shared-user` }, { path: `/api/projects/${b.id}/persons/` }],
        404,
        PROJECT_NOT_FOUND,
      )
      const own = await json(stack.api('/api/projects/1/persons/?distinct_id=shared-user'))
      expect(own.results).toHaveLength(1)
      expect(own.results[0].properties).toEqual({ email: 'a-user@a.example' })
      expect(own.results[0].uuid).not.toBe((before as any).persons.results[0].uuid)
      expect((await json(stack.api('/api/projects/1/persons/?distinct_id=b-only-user'))).results).toEqual([])
    })

    test('flags API on B’s project: list, create, retrieve, PATCH, PUT and DELETE are 404 Project not found for A', async () => {
      const base = `/api/projects/${b.id}/feature_flags`
      await expectAll(
        [
          { path: `${base}/` },
          { path: `${base}/?search=b-secret` },
          { method: 'POST', path: `${base}/`, json: { key: 'planted-by-a', filters: simple(100) } },
          { path: `${base}/${flagB.id}/` },
          { method: 'PATCH', path: `${base}/${flagB.id}/`, json: { name: 'changed by A', filters: simple(100) } },
          { method: 'PATCH', path: `${base}/${flagB.id}/`, json: { deleted: true } },
          { method: 'PUT', path: `${base}/${flagB.id}/`, json: { key: 'b-secret-flag', name: 'replaced by A', filters: simple(0), active: false } },
          { method: 'DELETE', path: `${base}/${flagB.id}/` },
        ],
        404,
        PROJECT_NOT_FOUND,
      )
      const flag = await json(asB(`${base}/${flagB.id}/`))
      expect(flag).toEqual(flagB)
      expect((await json(asB(`${base}/`))).results.map((f: { key: string }) => f.key)).toEqual(['b-secret-flag'])
    })

    test('flags API: B’s flag id under A’s project is 404 Not found for retrieve, PATCH and PUT', async () => {
      const base = `/api/projects/1/feature_flags/${flagB.id}/`
      await expectAll(
        [
          { path: base },
          { path: `/api/projects/@current/feature_flags/${flagB.id}/` },
          { method: 'PATCH', path: base, json: { name: 'changed by A', active: false } },
          { method: 'PATCH', path: base, json: { deleted: true } },
          { method: 'PUT', path: base, json: { key: 'b-secret-flag', name: 'replaced by A', filters: simple(0) } },
        ],
        404,
        NOT_FOUND,
      )
      expect(await json(asB(`/api/projects/${b.id}/feature_flags/${flagB.id}/`))).toEqual(flagB)
    })

    test('flags API: a body naming B’s project writes to A’s; B’s flag key is free in A (no cross-organization uniqueness oracle)', async () => {
      const r = await stack.api('/api/projects/1/feature_flags/', { method: 'POST', json: { key: 'b-secret-flag', filters: simple(5), team_id: b.id, project_id: b.id } })
      expect(r.status).toBe(201)
      const created = await json(r)
      expect(created.id).not.toBe(flagB.id)
      const patched = await stack.api(`/api/projects/1/feature_flags/${flagA.id}/`, { method: 'PATCH', json: { team_id: b.id, name: 'still A' } })
      expect(patched.status).toBe(200)
      const local = await json(stack.api(`/api/feature_flag/local_evaluation?token=${PROJECT_KEY}`))
      const teams = Object.fromEntries(local.flags.map((f: { id: number; team_id: number }) => [f.id, f.team_id]))
      expect(teams[created.id]).toBe(1)
      expect(teams[flagA.id]).toBe(1)
      expect(teams[flagB.id]).toBeUndefined()
      expect((await json(asB(`/api/projects/${b.id}/feature_flags/`))).results.map((f: { id: number }) => f.id)).toEqual([flagB.id])
    })

    test('local evaluation: B’s project path is 404 for A; B’s token is 403 at both token paths, even with B’s ETag', async () => {
      await expectAll([{ path: `/api/projects/${b.id}/feature_flags/local_evaluation` }], 404, PROJECT_NOT_FOUND)
      const etag = (before as any).localEvaluation.etag as string
      expect(etag).toMatch(/^W\/"[0-9a-f]+"$/)
      await expectAll(
        [
          { path: `/api/feature_flag/local_evaluation?token=${b.token}` },
          { path: `/api/feature_flag/local_evaluation?token=${b.token}&send_cohorts`, headers: { 'if-none-match': etag } },
          { path: `/flags/definitions?token=${b.token}` },
          { path: `/flags/definitions?token=${b.token}&send_cohorts`, headers: { 'if-none-match': etag } },
        ],
        403,
        NO_ACCESS,
      )
      await expectAll([{ path: `/api/projects/${b.id}/feature_flags/local_evaluation`, headers: { 'if-none-match': etag } }], 404, PROJECT_NOT_FOUND)
      // A's own definitions never include B's flag
      const own = await json(stack.api(`/flags/definitions?token=${PROJECT_KEY}`))
      expect(own.flags.length).toBeGreaterThan(0)
      expect(own.flags.every((f: { team_id: number }) => f.team_id === 1)).toBe(true)
    })

    test('event definitions on B’s project: list, retrieve, PATCH and DELETE are 404 Project not found for A', async () => {
      const base = `/api/projects/${b.id}/event_definitions`
      await expectAll(
        [
          { path: `${base}/` },
          { path: `${base}/?search=secret` },
          { path: `${base}/${definitionB.id}/` },
          { method: 'PATCH', path: `${base}/${definitionB.id}/`, json: { tags: ['by-a'], post_to_chat: true } },
          { method: 'PATCH', path: `${base}/${definitionB.id}/`, json: { name: 'renamed by A' } },
          { method: 'DELETE', path: `${base}/${definitionB.id}/` },
        ],
        404,
        PROJECT_NOT_FOUND,
      )
      expect(await json(asB(`${base}/${definitionB.id}/`))).toEqual(definitionB)
    })

    test('event definitions: B’s definition id under A’s project is 404 Not found; B’s name is free in A', async () => {
      const base = `/api/projects/1/event_definitions/${definitionB.id}/`
      await expectAll(
        [
          { path: base },
          { method: 'PATCH', path: base, json: { tags: ['by-a'] } },
          { method: 'DELETE', path: base },
        ],
        404,
        NOT_FOUND,
      )
      expect((await json(stack.api('/api/projects/1/event_definitions/?search=secret'))).count).toBe(0)
      // renaming A's definition to B's name is no clash: names are unique per project only
      const renamed = await stack.api(`/api/projects/1/event_definitions/${definitionA.id}/`, { method: 'PATCH', json: { name: 'b secret event' } })
      expect(renamed.status).toBe(200)
      expect(await json(renamed)).toMatchObject({ id: definitionA.id, name: 'b secret event' })
      expect(await json(asB(`/api/projects/${b.id}/event_definitions/${definitionB.id}/`))).toEqual(definitionB)
    })

    test('capture with A’s personal key and B’s project_id is 400 invalid_project, and nothing lands in B', async () => {
      const r = await stack.app.handle(
        new Request(`${BASE}/capture/`, {
          method: 'POST',
          body: JSON.stringify({ api_key: PERSONAL_KEY, project_id: b.id, event: 'planted by A', distinct_id: 'shared-user' }),
        }),
      )
      expect(r.status).toBe(400)
      expect(await json(r)).toEqual({ type: 'validation_error', code: 'invalid_project', detail: 'The project id is invalid.', attr: 'project_id' })
      await landed()
      expect((await json(asB(`/api/projects/${b.id}/events/?event=planted%20by%20A`))).results).toEqual([])
    })

    test('after every attempt, B’s project, flag, local evaluation, definitions, events and persons are unchanged', async () => {
      await landed()
      expect(await snapshotOfB()).toEqual(before)
    })
  })
}
