// A person erased on request (DELETE /api/projects/:id/persons/:id/, PostHog's shape): its distinct ids, static
// cohort memberships and the properties /decide cached are gone when the call answers; with
// ?delete_events=true its events are gone from the events API too (SQLite by rows, ClickHouse 18.16 by a waited
// mutation; the modern ClickHouse path's lightweight DELETE runs in the event store contract on chDB); the next
// capture makes a new person. On the embedded stores and on real Postgres + ClickHouse.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { createFlag, decide } from '../helpers/flags'
import { BASE, json, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'
import { eventually } from '../chaos/load'

const onPlan = { groups: [{ properties: [{ key: 'plan', type: 'person', value: ['pro'], operator: 'exact' }], rollout_percentage: 100 }] }
const onCohort = (id: number) => ({ groups: [{ properties: [{ key: 'id', type: 'cohort', value: id }], rollout_percentage: 100 }] })

for (const stores of ['embedded', 'real'] as StoreChoice[]) {
  describe(`erasing a person (${stores === 'real' ? 'Postgres + ClickHouse 18.16' : 'embedded stores'})`, () => {
    let stack: Stack
    let cohortId: number
    beforeAll(async () => {
      stack = await startStack({ postgres: stores, clickhouse: stores }, { FLUSH_INTERVAL_MS: 20 })
      await createFlag(stack, { key: 'pro-plan', filters: onPlan })
      const r = await stack.api('/api/projects/1/cohorts/', { method: 'POST', json: { name: 'Beta', is_static: true } })
      expect(r.status).toBe(201)
      cohortId = (await json(r)).id
      await createFlag(stack, { key: 'beta', filters: onCohort(cohortId) })
    })
    afterAll(async () => {
      await stack?.close()
    })

    const capture = async (body: Record<string, unknown>) => {
      const r = await stack.app.handle(new Request(`${BASE}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, ...body }) }))
      expect(r.status).toBe(200)
    }
    const personOf = async (distinctId: string) => (await json(await stack.api(`/api/projects/1/persons/?distinct_id=${encodeURIComponent(distinctId)}`))).results[0]
    const eventsOf = async (distinctId: string) => (await json(await stack.api(`/api/projects/1/events/?distinct_id=${encodeURIComponent(distinctId)}`))).results as { event: string }[]
    const flags = async (distinctId: string) => (await decide(stack, 3, { distinct_id: distinctId })).featureFlags

    /** A person with two distinct ids, the pro plan, a static cohort membership and three events, all stored. */
    async function makePerson(id: string): Promise<string> {
      await capture({ event: 'pageview', distinct_id: `anon-${id}` })
      await capture({ event: '$identify', distinct_id: id, properties: { $anon_distinct_id: `anon-${id}`, $set: { plan: 'pro' } } })
      await capture({ event: 'clicked', distinct_id: id })
      expect(await eventually(async () => (await personOf(id))?.distinct_ids.length === 2 && (await eventsOf(id)).length === 2 && (await eventsOf(`anon-${id}`)).length === 1, 30_000, 50)).toBe(true)
      const person = await personOf(id)
      const added = await stack.api(`/api/projects/1/cohorts/${cohortId}/add_persons_to_static_cohort/`, { method: 'PATCH', json: { person_ids: [person.id] } })
      expect(added.status).toBe(200)
      expect(await flags(id)).toMatchObject({ 'pro-plan': true, beta: true }) // and now cached by /decide
      return person.id
    }

    test('with delete_events=true: person, ids, cohort membership, cached properties and events gone at once; a new capture makes a new person', async () => {
      const uuid = await makePerson('erase-me')
      await capture({ event: 'kept', distinct_id: 'someone-else' })
      expect(await eventually(async () => (await eventsOf('someone-else')).length === 1, 30_000, 50)).toBe(true)

      expect((await json(await stack.api(`/api/projects/1/cohorts/${cohortId}/`))).count).toBe(1)
      const r = await stack.api(`/api/projects/1/persons/${uuid}/?delete_events=true`, { method: 'DELETE' })
      expect(r.status).toBe(202)
      // at once: no polling
      expect(await personOf('erase-me')).toBeUndefined()
      expect(await personOf('anon-erase-me')).toBeUndefined()
      expect(await eventsOf('erase-me')).toEqual([])
      expect(await eventsOf('anon-erase-me')).toEqual([])
      expect(await flags('erase-me')).toMatchObject({ 'pro-plan': false, beta: false })
      expect(await flags('anon-erase-me')).toMatchObject({ 'pro-plan': false, beta: false })
      const members = await json(await stack.api(`/api/projects/1/cohorts/${cohortId}/persons/`))
      expect(members.results).toEqual([])
      expect((await json(await stack.api(`/api/projects/1/cohorts/${cohortId}/`))).count).toBe(0)
      expect((await eventsOf('someone-else')).length).toBe(1)
      // the same person again is not found
      expect((await stack.api(`/api/projects/1/persons/${uuid}/`, { method: 'DELETE' })).status).toBe(404)

      // a capture after the erasure makes a new person, knowing nothing of the old one
      await capture({ event: 'came back', distinct_id: 'erase-me' })
      expect(await eventually(async () => (await personOf('erase-me')) !== undefined, 30_000, 50)).toBe(true)
      const again = await personOf('erase-me')
      expect(again.distinct_ids).toEqual(['erase-me'])
      expect(again.properties).toEqual({})
      expect(await flags('erase-me')).toMatchObject({ 'pro-plan': false, beta: false })
      expect((await eventsOf('erase-me')).map((e) => e.event)).toEqual(['came back'])
    })

    test('with delete_events=true, the raw events leave DATA_DIR too: the write-ahead log deletes its copies once consumed', async () => {
      const id = `wal-${crypto.randomUUID()}`
      const value = `value-${crypto.randomUUID()}`
      // the embedded databases' own files keep deleted rows until they reuse the space (docs/operations.md)
      const databases = stores === 'embedded' ? new Set(['pg', 'events.sqlite', 'events.sqlite-wal', 'events.sqlite-shm', 'events.duckdb', 'events.duckdb.wal', 'events.duckdb.tmp']) : new Set<string>()
      const filesHolding = () => {
        const found: string[] = []
        for (const entry of readdirSync(stack.dataDir, { recursive: true, withFileTypes: true })) {
          const path = join(entry.parentPath, entry.name)
          if (!entry.isFile() || databases.has(relative(stack.dataDir, path).split(sep)[0]!)) continue
          const bytes = readFileSync(path)
          if (bytes.includes(id) || bytes.includes(value)) found.push(relative(stack.dataDir, path))
        }
        return found
      }
      await capture({ event: 'signed up', distinct_id: id, properties: { $set: { email: value }, note: value } })
      await capture({ event: 'clicked', distinct_id: id, properties: { note: value } })
      expect(await eventually(async () => (await personOf(id)) !== undefined && (await eventsOf(id)).length === 2, 30_000, 50)).toBe(true)
      const before = filesHolding()
      expect(before.length).toBeGreaterThan(0) // the log's segments hold the raw events

      const erased = performance.now()
      expect((await stack.api(`/api/projects/1/persons/${(await personOf(id)).id}/?delete_events=true`, { method: 'DELETE' })).status).toBe(202)
      // the window: until every consumer has passed the records (they have, or nearly: the erasure waited for the store)
      expect(await eventually(async () => filesHolding().length === 0, 10_000, 50)).toBe(true)
      console.log(`${stores}: the erased person's raw events were in ${before.join(', ')}; gone ${(performance.now() - erased).toFixed(0)} ms after the erasure began`)
      // and capture goes on: a new event is logged and stored
      await capture({ event: 'after', distinct_id: 'someone-new' })
      expect(await eventually(async () => (await eventsOf('someone-new')).length === 1, 30_000, 50)).toBe(true)
    })

    test('without delete_events the events stay; bad input is refused', async () => {
      const uuid = await makePerson('keep-events')
      expect((await stack.api(`/api/projects/1/persons/${uuid}/?delete_events=maybe`, { method: 'DELETE' })).status).toBe(400)
      expect((await stack.api(`/api/projects/1/persons/not-a-uuid/`, { method: 'DELETE' })).status).toBe(404)
      expect((await stack.api(`/api/projects/1/persons/${crypto.randomUUID()}/`, { method: 'DELETE' })).status).toBe(404)
      const r = await stack.api(`/api/projects/1/persons/${uuid}`, { method: 'DELETE' })
      expect(r.status).toBe(202)
      expect(await personOf('keep-events')).toBeUndefined()
      expect(await flags('keep-events')).toMatchObject({ 'pro-plan': false, beta: false })
      expect((await eventsOf('keep-events')).length).toBe(2)
    })
  })
}
