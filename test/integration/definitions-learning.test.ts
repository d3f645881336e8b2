// What ingestion teaches the definitions APIs (event, person and group property definitions, event-property
// pairs, event definitions created ahead of ingestion), and the event-definition extras, through capture and
// HTTP on real Postgres and on the embedded one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DefinitionTracker } from '../../src/definitions/tracker'
import { silentLogger } from '../../src/log'
import { Learner } from '../../src/people/learner'
import type { Batch } from '../../src/pipeline/consumer'
import { MetricsRecorder } from '../../src/pipeline/metrics-relay'
import { createProject } from '../../src/projects/repository'
import { BASE, json, learned, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const props = '/api/projects/1/property_definitions'
const events = '/api/projects/1/event_definitions'
type Item = { name: string; property_type: string | null; is_numerical: boolean; id: string }

async function send(stack: Stack, batch: Record<string, unknown>[], token = PROJECT_KEY) {
  const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: token, batch }) }))
  expect(r.status).toBe(200)
}

const ev = (event: string, properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ event, properties: { distinct_id: 'user-1', ...properties }, ...extra })

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`definitions learned from ingestion (${postgres} Postgres)`, () => {
    let stack: Stack
    const list = async (query: string): Promise<Record<string, Item>> => {
      const page = await json(stack.api(`${props}/?limit=1000&${query}`))
      return Object.fromEntries(page.results.map((d: Item) => [d.name, d]))
    }
    const typeOf = async (query: string, name: string) => (await list(query))[name]?.property_type
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20 })
    })
    afterAll(() => stack?.close())

    test('event properties: every top-level key but $set, $set_once, $unset, $groups, $group_N; typed by PostHog’s rules', async () => {
      const nowSeconds = Math.floor(Date.now() / 1000)
      await send(stack, [
        ev('$pageview', {
          plan: 'pro',
          price: 9.5,
          count_text: '42',
          is_admin: true,
          flag_text: 'FALSE',
          signup_time: nowSeconds,
          old_time: 1_000_000_000,
          created_at: '2024-03-01T10:00:00Z',
          utm_campaign: 12,
          nested: { a: 1 },
          $unset: ['x'],
          $groups: { company: 'acme' },
          ['k'.repeat(201)]: 'too long',
        }),
      ])
      await learned(stack)
      const found = await list('type=event')
      const types = Object.fromEntries(Object.values(found).map((d) => [d.name, d.property_type]))
      expect(types).toMatchObject({
        plan: 'String',
        price: 'Numeric',
        count_text: 'String',
        is_admin: 'Boolean',
        flag_text: 'Boolean',
        signup_time: 'DateTime',
        old_time: 'Numeric',
        created_at: 'DateTime',
        utm_campaign: 'String',
        nested: null,
      })
      for (const d of Object.values(found)) expect(d.is_numerical).toBe(d.property_type === 'Numeric')
      for (const absent of ['$unset', '$groups', '$group_0', '$set', 'k'.repeat(201)]) expect(found[absent]).toBeUndefined()
      // distinct_id was learned, but a type=event list never shows it
      const [stored] = await stack.services.db.sql`select count(*)::int as n from property_definitions where team_id = 1 and type = 'event' and name in ('distinct_id', '$group_0')`
      expect(stored.n).toBe(1)
    })

    test('person properties from $set and $set_once (in properties or top level), on any event; not from personless events', async () => {
      await send(stack, [
        ev('clicked', { $set: { email: 'a@b.c', age: 30 }, $set_once: { first_seen: '2024-01-01' } }),
        ev('$identify', {}, { $set: { tier: 'gold' }, $set_once: { source: 'ad' } }),
        ev('anonymous thing', { $process_person_profile: false, $set: { secret: 'no' } }),
      ])
      await learned(stack)
      const people = await list('type=person')
      expect(Object.fromEntries(Object.values(people).map((d) => [d.name, d.property_type]))).toEqual({
        age: 'Numeric',
        email: 'String',
        first_seen: 'DateTime',
        source: 'String',
        tier: 'String',
      })
      // person keys are not event properties
      expect((await list('type=event')).email).toBeUndefined()
    })

    test('group properties from $groupidentify’s $group_set only, at the group type’s index', async () => {
      // company took index 0 from the first test's $groups; organization takes 1
      await send(stack, [
        ev('$pageview', { $groups: { organization: 'o1' } }),
        ev('$groupidentify', { $group_type: 'company', $group_key: 'acme', $group_set: { seats: 10, name: 'Acme' }, extra: 'not learned' }),
      ])
      await learned(stack)
      const company = await list('type=group&group_type_index=0')
      expect(Object.fromEntries(Object.values(company).map((d) => [d.name, d.property_type]))).toEqual({ name: 'String', seats: 'Numeric' })
      expect(Object.keys(await list('type=group&group_type_index=1'))).toEqual([])
      expect((await list('type=event')).extra).toBeUndefined()
      expect((await list('type=event')).$group_type).toBeUndefined()
    })

    test('(event, property) pairs of each event’s own keys: event_names, filter_by_event_names, seen_together', async () => {
      const seen = await json(stack.api(`${props}/seen_together/?event_names=$pageview&event_names=clicked&event_names=$groupidentify&property_name=plan`))
      expect(seen).toEqual({ $pageview: true, clicked: false, $groupidentify: false })
      const onPageview = await list(`event_names=${encodeURIComponent('["$pageview"]')}&filter_by_event_names=true`)
      expect(Object.keys(onPageview)).toContain('plan')
      expect(Object.keys(onPageview)).not.toContain('$set')
      expect(await json(stack.api(`${props}/seen_together/?event_names=clicked&property_name=email`))).toEqual({ clicked: false })
    })

    test('the first type sticks; an untyped definition takes the first real type later', async () => {
      await send(stack, [ev('$pageview', { price: 'cheap', nested: 'now text', later: null })])
      await learned(stack)
      expect(await typeOf('type=event', 'price')).toBe('Numeric')
      expect(await typeOf('type=event', 'nested')).toBe('String')
      expect(await typeOf('type=event', 'later')).toBeNull()
      await send(stack, [ev('$pageview', { later: [1, 2] })])
      await send(stack, [ev('$pageview', { later: false })])
      await learned(stack)
      expect(await typeOf('type=event', 'later')).toBe('Boolean')
      await send(stack, [ev('$pageview', { later: 5 })])
      await learned(stack)
      expect(await typeOf('type=event', 'later')).toBe('Boolean')
    })

    test('a definition deleted through the API comes back when next seen by a learner that has not seen it (as after a restart)', async () => {
      const plan = (await list('type=event')).plan!
      expect((await stack.api(`${props}/${plan.id}/`, { method: 'DELETE' })).status).toBe(204)
      expect((await list('type=event')).plan).toBeUndefined()
      const fresh = new Learner({ sql: stack.services.db.sql, tracker: new DefinitionTracker(), metrics: new MetricsRecorder(), log: silentLogger })
      const batch: Batch = {
        records: [{ seq: 1, projectId: 1, receivedAt: Date.now(), size: 1, decodedSize: 1, dropped: new Map(), events: [{ uuid: crypto.randomUUID(), event: '$pageview', distinctId: 'u', properties: { plan: 'team' }, timestamp: Date.now() }] }],
        firstSeq: 1,
        lastSeq: 1,
        events: 1,
        items: 1,
        bytes: 1,
      }
      await fresh.handle(batch)
      const back = (await list('type=event')).plan!
      expect(back.property_type).toBe('String')
      expect(back.id).not.toBe(plan.id)
    })

    test('an event definition created ahead of ingestion keeps its id and gets last_seen_at when the event arrives', async () => {
      const r = await stack.api(`${events}/`, { method: 'POST', json: { name: 'Checkout Started', description: 'the cart page', tags: ['Funnel', 'funnel'] } })
      expect(r.status).toBe(201)
      const created = await json(r)
      expect(created).toMatchObject({ name: 'Checkout Started', description: 'the cart page', tags: ['funnel'], created_at: null, last_seen_at: null, verified: false, hidden: false })
      expect(created.created_by).toMatchObject({ email: 'admin@localhost' })
      await send(stack, [ev('Checkout Started', { step: 1 })])
      await learned(stack)
      const seen = await json(stack.api(`${events}/by_name/?name=${encodeURIComponent('Checkout Started')}`))
      expect(seen.id).toBe(created.id)
      expect(Date.parse(seen.last_seen_at)).toBeGreaterThan(Date.now() - 60_000)
      expect(seen.description).toBe('the cart page')
    })

    test('another project’s events teach nothing about this one', async () => {
      const other = await createProject(stack.services.db.sql, { name: 'Other', token: 'phc_other_project_token_0001' })
      await stack.services.tokens.invalidate()
      await send(stack, [ev('their event', { their_secret: 1, $set: { their_person: 1 } })], 'phc_other_project_token_0001')
      await learned(stack)
      expect((await list('type=event')).their_secret).toBeUndefined()
      expect((await list('type=person')).their_person).toBeUndefined()
      const theirs = await json(stack.api(`/api/projects/${other.id}/property_definitions/?search=their`))
      expect(theirs.results.map((d: Item) => d.name)).toEqual(['their_secret'])
      expect(await json(stack.api(`${props}/seen_together/?event_names=their%20event&property_name=their_secret`))).toEqual({ 'their event': false })
    })
  })

  describe(`event definition extras (${postgres} Postgres)`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' })
    })
    afterAll(() => stack?.close())
    const post = (body: unknown) => stack.api(`${events}/`, { method: 'POST', json: body })

    test('POST: 201 with null timestamps; a missing, blank or taken name is 400 attr name', async () => {
      const r = await post({ name: 'Signed Up' })
      expect(r.status).toBe(201)
      expect(await json(r)).toMatchObject({ name: 'Signed Up', description: '', tags: [], created_at: null, last_seen_at: null, verified: false, hidden: false })
      for (const [body, code] of [
        [{}, 'required'],
        [{ name: ' ' }, 'blank'],
        [{ name: 'Signed Up' }, 'unique'],
        [{ description: 'no name' }, 'required'],
      ] as const) {
        const bad = await post(body)
        expect(bad.status).toBe(400)
        expect(await json(bad)).toMatchObject({ type: 'validation_error', code, attr: 'name' })
      }
      expect(await json(post({ name: 'Signed Up' }))).toMatchObject({ detail: "Event definition with name 'Signed Up' already exists" })
      expect(await json(post({ name: 'x', verified: true, hidden: true }))).toMatchObject({ type: 'validation_error', detail: 'An event cannot be both hidden and verified' })
    })

    test('by_name: the definition; 404 and 400 in the error envelope', async () => {
      const d = await json(stack.api(`${events}/by_name/?name=Signed%20Up`))
      expect(d.name).toBe('Signed Up')
      expect(await json(stack.api(`${events}/${d.id}/`))).toEqual(d)
      const missing = await stack.api(`${events}/by_name/?name=nope`)
      expect(missing.status).toBe(404)
      expect(await json(missing)).toEqual({ type: 'invalid_request', code: 'not_found', detail: "Event definition with name 'nope' not found", attr: null })
      const noName = await stack.api(`${events}/by_name/`)
      expect(noName.status).toBe(400)
      expect(await json(noName)).toEqual({ type: 'validation_error', code: 'required', detail: "Query parameter 'name' is required", attr: 'name' })
    })

    test('PATCH description, verified, hidden with the shared rules; exclude_hidden', async () => {
      const d = (await json(post({ name: 'Purchase' })))
      const patch = (body: unknown) => stack.api(`${events}/${d.id}/`, { method: 'PATCH', json: body })
      const verified = await json(patch({ description: 'money', verified: true }))
      expect(verified).toMatchObject({ description: 'money', verified: true, hidden: false, verified_by: { email: 'admin@localhost' } })
      expect(Date.parse(verified.verified_at)).toBeGreaterThan(Date.now() - 60_000)
      expect((await json(patch({ verified: true, verified_at: null }))).verified_at).toBe(verified.verified_at)
      expect(await json(patch({ verified: 'yes' }))).toMatchObject({ type: 'validation_error', attr: 'verified' })
      expect((await patch({ hidden: true, verified: true })).status).toBe(400)
      expect(await json(patch({ hidden: true }))).toMatchObject({ hidden: true, verified: false, verified_at: null, verified_by: null })
      expect((await json(stack.api(`${events}/?search=Purchase`))).count).toBe(1)
      expect((await json(stack.api(`${events}/?search=Purchase&exclude_hidden=true`))).count).toBe(0)
      expect(await json(stack.api(`${events}/${d.id}/`, { method: 'PUT', json: { hidden: false, description: 'via PUT' } }))).toMatchObject({ hidden: false, description: 'via PUT' })
    })

    test('bulk_update_tags: add, remove, set; tags sorted; ids not found (or another project’s) skipped', async () => {
      const a = await json(post({ name: 'bulk a', tags: ['keep'] }))
      const b = await json(post({ name: 'bulk b' }))
      const sql = stack.services.db.sql
      const [org] = await sql`insert into organizations (name) values ('Elsewhere') returning id`
      const foreign = await createProject(sql, { name: 'Elsewhere', organizationId: org.id })
      const [theirs] = await sql`insert into event_definitions (team_id, name) values (${foreign.id}, 'theirs') returning id`
      const bulk = (body: unknown) => json(stack.api(`${events}/bulk_update_tags/`, { method: 'POST', json: body }))
      expect(await bulk({ ids: [a.id, b.id, theirs.id], action: 'add', tags: ['Zed', 'ant'] })).toEqual({
        updated: [
          { id: a.id, tags: ['ant', 'keep', 'zed'] },
          { id: b.id, tags: ['ant', 'zed'] },
        ],
        skipped: [{ id: theirs.id, reason: 'Not found' }],
      })
      expect((await bulk({ ids: [a.id], action: 'remove', tags: ['keep', 'absent'] })).updated).toEqual([{ id: a.id, tags: ['ant', 'zed'] }])
      expect((await bulk({ ids: [b.id], action: 'set', tags: ['only'] })).updated).toEqual([{ id: b.id, tags: ['only'] }])
      expect((await json(stack.api(`${events}/${b.id}/`))).tags).toEqual(['only'])
      const [untouched] = await sql`select tags from event_definitions where id = ${theirs.id}`
      expect(untouched.tags).toEqual([])
      expect(await bulk({ ids: 'x', action: 'add', tags: ['a'] })).toMatchObject({ type: 'validation_error', attr: 'ids' })
      expect(await bulk({ ids: [a.id], action: 'add' })).toMatchObject({ type: 'validation_error', attr: 'tags' })
    })
  })
}
