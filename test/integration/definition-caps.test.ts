// A project's definitions are capped (MAX_EVENT_DEFINITIONS, MAX_PROPERTY_DEFINITIONS): a client sending tens of
// thousands of unique event names or property keys gets its events stored and no more definitions than the cap,
// and another project's persons and definitions are learned meanwhile as usual.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { createProject } from '../../src/projects/repository'
import { BASE, learned, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const EVENT_CAP = 10_000
const PROPERTY_CAP = 3_000

async function sendGzip(stack: Stack, token: string, batch: Record<string, unknown>[]) {
  const body = gzipSync(JSON.stringify({ api_key: token, batch }))
  const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body }))
  expect(r.status).toBe(200)
  return body.length
}

/** The metric's value once it reaches `expected` (the flush worker relays its counts now and then), or after 5 s. */
async function metric(stack: Stack, line: string, expected: number): Promise<number> {
  const deadline = Date.now() + 5000
  for (;;) {
    const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
    const found = text.split('\n').find((l) => l.startsWith(line))
    const value = found ? Number(found.split(' ').pop()) : 0
    if (value >= expected || Date.now() > deadline) return value
    await Bun.sleep(50)
  }
}

for (const postgres of ['embedded', 'real'] as StoreChoice[]) {
  describe(`definition caps (${postgres} Postgres)`, () => {
    let stack: Stack
    let other: { id: number; api_token: string }
    beforeAll(async () => {
      stack = await startStack({ postgres, clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, MAX_PROPERTY_DEFINITIONS: PROPERTY_CAP })
      other = await createProject(stack.services.db.sql, { name: 'Neighbour', token: 'phc_neighbour_project_0001' })
      await stack.services.tokens.invalidate()
    })
    afterAll(() => stack?.close())

    test('60,000 unique event names from one token: at most the cap stored, every event stored, the neighbour learned promptly', async () => {
      const sql = stack.services.db.sql
      let wire = 0
      const started = Date.now()
      let neighbourLearnedMs = -1
      for (let round = 0; round < 6; round++) {
        const batch = Array.from({ length: 10_000 }, (_, i) => ({ event: `flood_${round}_${i}`, distinct_id: 'flooder', properties: {} }))
        wire += await sendGzip(stack, PROJECT_KEY, batch)
        if (round === 2) {
          // the neighbour's person and event, sent in the middle of the flood
          const sentAt = Date.now()
          await sendGzip(stack, other.api_token, [{ event: 'neighbour signed up', distinct_id: 'alice', properties: { $set: { plan: 'pro' } } }])
          for (;;) {
            const [person] = await sql`select p.properties from persons p join person_distinct_ids d on d.person_id = p.id where d.team_id = ${other.id} and d.distinct_id = 'alice'`
            const [definition] = await sql`select 1 from event_definitions where team_id = ${other.id} and name = 'neighbour signed up'`
            if (person && definition) break
            if (Date.now() - sentAt > 90_000) throw new Error('the neighbour was not learned within 90 s')
            await Bun.sleep(20)
          }
          neighbourLearnedMs = Date.now() - sentAt
        }
      }
      await learned(stack, 120_000)
      const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from event_definitions where team_id = 1`
      const stored = await metric(stack, 'pipeline_flushed_events_total ', 60_001)
      const refused = await metric(stack, 'definitions_refused_total{kind="event"}', 50_000)
      console.log(`[definition caps ${postgres}] ${Math.round(wire / 1024)} KB of gzip, 60,000 names: ${count} definitions, ${refused} refused, neighbour learned in ${neighbourLearnedMs} ms, all learned in ${Date.now() - started} ms`)
      expect(count).toBe(EVENT_CAP)
      expect(refused).toBe(50_000)
      expect(stored).toBe(60_001) // every event stored, the neighbour's too
      expect(neighbourLearnedMs).toBeGreaterThanOrEqual(0)
    }, 180_000)

    test('property keys: event, person properties capped per type; a definition the project has is still updated', async () => {
      const sql = stack.services.db.sql
      const keys = (prefix: string, from: number) => Object.fromEntries(Array.from({ length: 4_000 }, (_, i) => [`${prefix}${from + i}`, null]))
      // a key made untyped first, before the cap is reached
      await sendGzip(stack, PROJECT_KEY, [{ event: 'typed', distinct_id: 'u', properties: { early: null } }])
      await learned(stack)
      for (let i = 0; i < 3; i++) {
        await sendGzip(stack, PROJECT_KEY, [{ event: 'wide', distinct_id: 'u', properties: { ...keys('k', i * 4000), $set: keys('p', i * 4000) } }])
      }
      await learned(stack, 60_000)
      // the untyped definition the project has takes its first type, at the cap
      await sendGzip(stack, PROJECT_KEY, [{ event: 'typed', distinct_id: 'u', properties: { early: 'now a string' } }])
      await learned(stack)
      const rows = await sql<{ type: string; count: number }[]>`select type, count(*)::int as count from property_definitions where team_id = 1 group by type`
      const byType = Object.fromEntries(rows.map((r) => [r.type, r.count]))
      const [early] = await sql`select property_type from property_definitions where team_id = 1 and type = 'event' and name = 'early'`
      console.log(`[definition caps ${postgres}] 12,000 event and 12,000 person keys: ${JSON.stringify(byType)}`)
      expect(byType.event).toBe(PROPERTY_CAP)
      expect(byType.person).toBe(PROPERTY_CAP)
      expect(early.property_type).toBe('String')
      expect(await metric(stack, 'definitions_refused_total{kind="person_property"}', 12_000 - PROPERTY_CAP)).toBe(12_000 - PROPERTY_CAP)
    }, 120_000)
  })
}
