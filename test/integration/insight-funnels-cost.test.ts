// What a large funnel costs on the embedded store: 100,000 events of 50 persons through a funnel of 20 steps (the
// most a query may have), ordered, strict and unordered, read in pages of 50,000 rows. Timings are printed; the
// counts are asserted, and every page stays a bounded statement of its own.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, json, learned, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

const PERSONS = 50
const PER_PERSON = 2000
const STEPS = 20
const DAY = Date.UTC(2024, 4, 6)

describe('funnel cost (embedded store)', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20 })
    const started = performance.now()
    for (let p = 0; p < PERSONS; p++) {
      // each person goes through the 20 steps 100 times, a second apart
      const batch = Array.from({ length: PER_PERSON }, (_, i) => ({ event: `step-${i % STEPS}`, timestamp: new Date(DAY + p * 3_600_000 + i * 1000).toISOString(), properties: { distinct_id: `person-${p}` } }))
      const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))
      expect(r.status).toBe(200)
    }
    await learned(stack, 120_000)
    for (let i = 0; i < 300; i++) {
      const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'HogQLQuery', query: 'SELECT count(DISTINCT person_id) FROM events' } } })
      if ((await json(r)).results[0][0] === PERSONS) break
      await Bun.sleep(100)
    }
    console.log(`seeded ${PERSONS * PER_PERSON} events in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }, 240_000)
  afterAll(async () => stack?.close())

  test('20 steps over 100,000 events: every person converts, in each order type', async () => {
    const series = Array.from({ length: STEPS }, (_, i) => ({ kind: 'EventsNode', event: `step-${i}` }))
    for (const order of ['ordered', 'strict', 'unordered']) {
      const started = performance.now()
      const r = await stack.api('/api/projects/1/query/', {
        method: 'POST',
        json: { query: { kind: 'FunnelsQuery', series, dateRange: { date_from: '2024-05-01', date_to: '2024-05-10' }, funnelsFilter: { funnelOrderType: order } }, refresh: 'force_blocking' },
      })
      const body = await json(r)
      expect(r.status).toBe(200)
      console.log(`${order}: ${PERSONS * PER_PERSON} events, ${STEPS} steps, ${body.hogql.split(';\n\n').length} pages: ${(performance.now() - started).toFixed(0)} ms`)
      expect(body.results.map((s: { count: number }) => s.count)).toEqual(new Array(STEPS).fill(PERSONS))
      // 19 s from one step to the next... except the first: 1 s from step-0 to step-1 of the last attempt
      expect(body.results[1].median_conversion_time).toBe(1)
    }
  }, 120_000)
})
