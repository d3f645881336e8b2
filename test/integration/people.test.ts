// What ingestion learns: persons and distinct ids (identify, alias, merges), groups and group types, event
// definitions — through capture into real Postgres (and the embedded one), and replay idempotency.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { CapturedEvent } from '../../src/capture/normalize'
import { DefinitionTracker } from '../../src/definitions/tracker'
import { silentLogger } from '../../src/log'
import { Learner } from '../../src/people/learner'
import type { Batch } from '../../src/pipeline/consumer'
import { MetricsRecorder } from '../../src/pipeline/metrics-relay'
import { BASE, json, learned, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

/** An event as the flush worker hands it to the learner. */
function capturedEvent(event: string, distinctId: string, properties: Record<string, unknown>): CapturedEvent {
  return { uuid: crypto.randomUUID(), event, distinctId, properties, timestamp: Date.now() }
}

/** A batch of one logged record holding these events (what a replay after a crash hands the learner again). */
function oneRecordBatch(events: CapturedEvent[]): Batch {
  return {
    records: [{ seq: 1, projectId: 1, receivedAt: Date.now(), size: 1, decodedSize: 1, dropped: new Map(), events }],
    firstSeq: 1,
    lastSeq: 1,
    events: events.length,
    items: events.length,
    bytes: 1,
  }
}

async function send(stack: Stack, batch: Record<string, unknown>[]) {
  const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))
  expect(r.status).toBe(200)
}

async function person(stack: Stack, distinctId: string) {
  const r = await json(stack.api(`/api/projects/1/persons/?distinct_id=${encodeURIComponent(distinctId)}`))
  return r.results[0]
}

const ev = (event: string, distinctId: string, properties: Record<string, unknown> = {}) => ({ event, properties: { distinct_id: distinctId, ...properties } })

for (const postgres of ['real', 'embedded'] as StoreChoice[]) {
  describe(`learning from events (${postgres} Postgres)`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20 })
    })
    afterAll(() => stack?.close())

    test('$identify links the anonymous id; $set and $set_once apply; the persons API shows it', async () => {
      await send(stack, [
        ev('$pageview', 'anon-1', { $set_once: { first_seen_on: 'landing' } }),
        ev('$identify', 'user-1', { $anon_distinct_id: 'anon-1', $set: { email: 'a@b.c' }, $set_once: { first_seen_on: 'ignored', signup: 'web' } }),
      ])
      await learned(stack)
      const p = await person(stack, 'anon-1')
      expect(p).toMatchObject({ distinct_ids: ['anon-1', 'user-1'], is_identified: true, properties: { first_seen_on: 'landing', email: 'a@b.c', signup: 'web' } })
      expect((await person(stack, 'user-1')).uuid).toBe(p.uuid)
    })

    test('two existing persons merge: the identified person’s properties win', async () => {
      await send(stack, [ev('$pageview', 'anon-2', { $set: { plan: 'free', utm: 'ad' } }), ev('signup', 'user-2', { $set: { plan: 'pro' } })])
      await learned(stack)
      expect((await person(stack, 'anon-2')).uuid).not.toBe((await person(stack, 'user-2')).uuid)
      await send(stack, [ev('$identify', 'user-2', { $anon_distinct_id: 'anon-2' })])
      await learned(stack)
      const merged = await person(stack, 'anon-2')
      expect(merged).toMatchObject({ distinct_ids: ['anon-2', 'user-2'], properties: { plan: 'pro', utm: 'ad' } })
      const all = await json(stack.api('/api/projects/1/persons/?limit=1000'))
      expect(all.results.filter((x: { distinct_ids: string[] }) => x.distinct_ids.includes('anon-2'))).toHaveLength(1)
    })

    test('$create_alias adds the alias; an identified person is not merged again; illegal ids never merge', async () => {
      await send(stack, [
        ev('$create_alias', 'user-3', { alias: 'user3@example.com' }),
        ev('$identify', 'user-4', { $anon_distinct_id: 'anon-4' }),
        ev('$pageview', 'user-5'),
        ev('$identify', 'user-5', { $anon_distinct_id: 'user-4' }), // both have persons and user-4's is identified: refused
        ev('$identify', 'user-8', { $anon_distinct_id: 'anon-4' }), // user-8 has no person: it joins anon-4's
        ev('$identify', 'user-6', { $anon_distinct_id: 'anonymous', $set: { ok: true } }),
        ev('$identify', 'user-7', { $anon_distinct_id: 'undefined' }),
      ])
      await learned(stack)
      expect((await person(stack, 'user3@example.com')).distinct_ids).toEqual(['user-3', 'user3@example.com'])
      expect((await person(stack, 'user-4')).distinct_ids).toEqual(['anon-4', 'user-4', 'user-8'])
      expect((await person(stack, 'user-5')).distinct_ids).toEqual(['user-5'])
      expect(await person(stack, 'anonymous')).toBeUndefined()
      expect(await person(stack, 'undefined')).toBeUndefined()
      expect((await person(stack, 'user-6')).properties).toEqual({ ok: true })
    })

    test('$unset removes person properties, as a list or as an object of keys, across batches and within one', async () => {
      await send(stack, [ev('$pageview', 'unset-1', { $set: { a: 1, b: 2, c: 3, d: 4, keep: 'yes' } })])
      await learned(stack)
      expect((await person(stack, 'unset-1')).properties).toEqual({ a: 1, b: 2, c: 3, d: 4, keep: 'yes' })
      await send(stack, [
        ev('clicked', 'unset-1', { $unset: ['a', 'never-set'] }),
        ev('clicked', 'unset-1', { $unset: { b: null } }),
        ev('clicked', 'unset-1', { $set: { e: 5 } }),
        ev('clicked', 'unset-1', { $unset: ['e', 'c'] }), // set and removed in the same batch
      ])
      await learned(stack)
      expect((await person(stack, 'unset-1')).properties).toEqual({ d: 4, keep: 'yes' })
      // removed keys are absent, not null: $set_once may fill them again
      await send(stack, [ev('clicked', 'unset-1', { $set_once: { a: 'again', keep: 'no' } })])
      await learned(stack)
      expect((await person(stack, 'unset-1')).properties).toEqual({ a: 'again', d: 4, keep: 'yes' })
    })

    test('illegal ids ("null", "0", "Anonymous", quoted) never merge; case is ignored only for PostHog’s case-insensitive ones, so "NULL" merges', async () => {
      // someone sent events as these ids: they have persons, which identify must not absorb or join
      await send(stack, [ev('$pageview', 'null'), ev('$pageview', '0'), ev('$pageview', 'Anonymous'), ev('$pageview', 'anon-ill')])
      await learned(stack)
      await send(stack, [
        ev('$identify', 'ill-1', { $anon_distinct_id: 'null', $set: { who: 1 } }),
        ev('$identify', 'ill-2', { $anon_distinct_id: 'null' }), // a second user with the same bogus id: not merged with ill-1
        ev('$identify', 'ill-3', { $anon_distinct_id: '0' }),
        ev('$identify', 'ill-4', { $anon_distinct_id: 'Anonymous' }),
        ev('$identify', 'ill-5', { $anon_distinct_id: 'GUEST' }),
        ev('$identify', 'ill-6', { $anon_distinct_id: '"null"' }),
        ev('$create_alias', 'ill-7', { alias: 'Not_Authenticated' }),
        ev('$identify', 'Anonymous', { $anon_distinct_id: 'anon-ill' }), // illegal on the other side too
        ev('$identify', 'ill-8', { $anon_distinct_id: 'NULL' }), // case-sensitive in PostHog: "NULL" is not "null"
      ])
      await learned(stack)
      for (const id of ['null', '0', 'Anonymous', 'anon-ill']) expect((await person(stack, id)).distinct_ids).toEqual([id])
      for (const id of ['ill-1', 'ill-2', 'ill-3', 'ill-4', 'ill-5', 'ill-6', 'ill-7']) expect((await person(stack, id)).distinct_ids).toEqual([id])
      for (const id of ['GUEST', '"null"', 'Not_Authenticated']) expect(await person(stack, id)).toBeUndefined()
      expect((await person(stack, 'ill-1')).properties).toEqual({ who: 1 })
      expect((await person(stack, 'null')).properties).toEqual({})
      expect((await person(stack, 'ill-8')).distinct_ids).toEqual(['NULL', 'ill-8'])
    })

    test('top-level $set and $set_once on a captured event update the person, the top level winning over properties', async () => {
      await send(stack, [
        {
          event: 'signed up',
          distinct_id: 'top-1',
          $set: { plan: 'pro', seats: 3 },
          $set_once: { first_plan: 'pro' },
          properties: { $set: { plan: 'free', source: 'ad' }, $set_once: { first_plan: 'free', referrer: 'x' } },
        },
        { event: 'upgraded', distinct_id: 'top-1', $set: { seats: 10 }, $set_once: { first_plan: 'enterprise', upgraded_once: true } },
        { event: '$identify', properties: { distinct_id: 'top-user', $anon_distinct_id: 'top-1' }, $set: { email: 'top@example.com' } },
      ])
      await learned(stack)
      const p = await person(stack, 'top-1')
      expect(p).toMatchObject({ distinct_ids: ['top-1', 'top-user'], is_identified: true })
      expect(p.properties).toEqual({ plan: 'pro', seats: 10, source: 'ad', first_plan: 'pro', referrer: 'x', upgraded_once: true, email: 'top@example.com' })
    })

    test('group types get the lowest free index, at most five; $group_set upserts the group', async () => {
      await send(stack, [
        { event: '$groupidentify', properties: { distinct_id: 'setup', $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'free', seats: 5 } } },
        ev('clicked', 'user-1', { $groups: { company: 'acme', project: 'web', team: 't', org: 'o', unit: 'u', overflow: 'x' } }),
        { event: '$groupidentify', properties: { distinct_id: 'setup', $group_type: 'company', $group_key: 'acme', $group_set: { plan: 'pro' } } },
      ])
      await learned(stack)
      const sql = stack.services.db.sql
      const types = await sql`select group_type, group_type_index from group_type_mappings where team_id = 1 order by group_type_index`
      expect(types.map((t) => [t.group_type, t.group_type_index])).toEqual([
        ['company', 0],
        ['project', 1],
        ['team', 2],
        ['org', 3],
        ['unit', 4],
      ])
      const [group] = await sql`select group_properties from groups where team_id = 1 and group_type_index = 0 and group_key = 'acme'`
      expect(group.group_properties).toEqual({ plan: 'pro', seats: 5 })
      expect(await person(stack, 'setup')).toBeUndefined() // $groupidentify is not about a person
    })

    test('every ingested event name gets a definition', async () => {
      await send(stack, [ev('Added to cart', 'user-1'), ev('Added to cart', 'user-2'), ev('$pageview', 'user-1')])
      await learned(stack)
      const names = (await json(stack.api('/api/projects/1/event_definitions/?limit=1000'))).results.map((d: { name: string }) => d.name)
      expect(names).toContain('Added to cart')
      expect(names).toContain('$identify')
      expect(names.filter((n: string) => n === 'Added to cart')).toHaveLength(1)
    })

    test('a batch replayed (as after a crash before the cursor moved) leaves the same state', async () => {
      const learner = new Learner({ sql: stack.services.db.sql, tracker: new DefinitionTracker(), metrics: new MetricsRecorder(), log: silentLogger })
      const e = capturedEvent
      const batch = oneRecordBatch([
        e('$pageview', 'replay-anon', { $set_once: { a: 1 } }),
        e('$identify', 'replay-user', { $anon_distinct_id: 'replay-anon', $set: { b: 2 } }),
        e('$groupidentify', 'setup', { $group_type: 'company', $group_key: 'replayco', $group_set: { c: 3 } }),
        e('replayed event', 'replay-user', {}),
      ])
      const snapshot = async () => {
        const sql = stack.services.db.sql
        return {
          persons: await sql`select p.uuid, p.properties, p.is_identified, array_agg(d.distinct_id order by d.distinct_id) as ids
                               from persons p join person_distinct_ids d on d.person_id = p.id
                              where d.distinct_id like 'replay-%' group by p.uuid, p.properties, p.is_identified`,
          groups: await sql`select group_key, group_properties from groups where group_key = 'replayco'`,
          definitions: await sql`select name, created_at from event_definitions where name = 'replayed event'`,
        }
      }
      await learner.handle(batch)
      const first = await snapshot()
      await new Learner({ sql: stack.services.db.sql, tracker: new DefinitionTracker(), metrics: new MetricsRecorder(), log: silentLogger }).handle(batch)
      expect(await snapshot()).toEqual(first)
      expect(first.persons).toHaveLength(1)
      expect(first.persons[0]).toMatchObject({ properties: { a: 1, b: 2 }, is_identified: true, ids: ['replay-anon', 'replay-user'] })
      expect(first.definitions).toHaveLength(1)
    })

    test('replaying a batch that merged two persons that already existed leaves the same state', async () => {
      // the persons exist before the batch, learned through capture
      await send(stack, [
        ev('$pageview', 'rm-anon', { $set: { plan: 'free', utm: 'ad', shared: 'anon' } }),
        ev('$pageview', 'rm-anon-2'),
        ev('signup', 'rm-user', { $set: { plan: 'pro' } }),
        ev('$identify', 'rm-dang-a', { $set: { a: 1 } }),
        ev('$identify', 'rm-dang-b', { $set: { b: 1, a: 0 } }),
      ])
      await learned(stack)
      const sql = stack.services.db.sql
      const uuidOf = async (id: string) => (await person(stack, id)).uuid
      const before = { anon: await uuidOf('rm-anon'), user: await uuidOf('rm-user'), a: await uuidOf('rm-dang-a'), b: await uuidOf('rm-dang-b') }
      expect(new Set(Object.values(before)).size).toBe(4)

      const e = capturedEvent
      const batch = oneRecordBatch([
        e('$identify', 'rm-user', { $anon_distinct_id: 'rm-anon', $set: { email: 'rm@example.com' } }),
        e('$create_alias', 'rm-user', { alias: 'rm-anon-2' }),
        e('clicked', 'rm-anon', { $unset: ['utm'], $set_once: { plan: 'ignored', first_click: 'anon' } }),
        e('$merge_dangerously', 'rm-dang-a', { alias: 'rm-dang-b' }), // both identified: only dangerously
      ])
      const snapshot = async () => ({
        persons: await sql`select p.uuid, p.properties, p.is_identified, p.created_at, array_agg(d.distinct_id order by d.distinct_id) as ids
                             from persons p join person_distinct_ids d on d.person_id = p.id
                            where d.distinct_id like 'rm-%' group by p.uuid, p.properties, p.is_identified, p.created_at order by p.uuid`,
        orphans: await sql`select count(*)::int as n from persons p where p.team_id = 1
                              and not exists (select 1 from person_distinct_ids d where d.person_id = p.id)`,
      })
      const learner = () => new Learner({ sql, tracker: new DefinitionTracker(), metrics: new MetricsRecorder(), log: silentLogger })
      await learner().handle(batch)
      const first = await snapshot()
      await learner().handle(batch)
      expect(await snapshot()).toEqual(first)

      const byUuid = new Map(first.persons.map((p) => [p.uuid, p]))
      expect([...byUuid.keys()].sort()).toEqual([before.user, before.a].sort()) // the absorbed persons are gone
      expect(byUuid.get(before.user)).toMatchObject({
        ids: ['rm-anon', 'rm-anon-2', 'rm-user'],
        is_identified: true,
        properties: { plan: 'pro', shared: 'anon', email: 'rm@example.com', first_click: 'anon' },
      })
      expect(byUuid.get(before.user)!.properties).not.toHaveProperty('utm')
      expect(byUuid.get(before.a)).toMatchObject({ ids: ['rm-dang-a', 'rm-dang-b'], properties: { a: 1, b: 1 } })
      expect(first.orphans[0].n).toBe(0)
      // and the persons API agrees
      expect((await person(stack, 'rm-anon')).uuid).toBe(before.user)
      expect((await person(stack, 'rm-dang-b')).uuid).toBe(before.a)
    })
  })
}
