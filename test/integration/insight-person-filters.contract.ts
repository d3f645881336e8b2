// Person and cohort filters of an insight cost a scan of the project's persons (they live in Postgres, events in the
// event store). A hostile query used to multiply that scan: 20 series each with a person filter, compared with the
// previous period, scanned the persons 41 times, and PostHog's group form let one node carry 10,000 person filters,
// each evaluated for every person on the thread that serves /decide. Now a query's person and cohort filters are
// counted before anything runs (at most MAX_PERSON_FILTERS) and resolved together in one scan.
// Timings are printed; the statuses, the scan counts and the refusals are asserted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_PERSON_FILTERS } from '../../src/insights/filters'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

const PERSONS = 30_000
const DAY = Date.UTC(2024, 4, 6)

async function scans(stack: Stack): Promise<number> {
  const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
  return Number(/^insight_person_scans_total (\d+)/m.exec(text)?.[1] ?? 0)
}

/** The slowest of /_health answers asked every 20 ms while `work` runs. */
async function healthWhile<T>(stack: Stack, work: Promise<T>): Promise<{ result: T; worstMs: number }> {
  let done = false
  let worstMs = 0
  const probe = (async () => {
    while (!done) {
      const started = performance.now()
      await stack.app.handle(new Request(`${BASE}/_health`))
      worstMs = Math.max(worstMs, performance.now() - started)
      await Bun.sleep(20)
    }
  })()
  const result = await work.finally(() => (done = true))
  await probe
  return { result, worstMs }
}

export function insightPersonFiltersContract(name: string, start: () => Promise<Stack>): void {
  describe(`person filters of an insight (${name})`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await start()
      const sql = stack.services.db.sql
      await sql`
        insert into persons (uuid, team_id, properties)
        select gen_random_uuid(), 1, jsonb_build_object('plan', case when i % 100 = 0 then 'pro' else 'free' end, 'n', i)
          from generate_series(1, ${PERSONS}) as i`
      const batch = Array.from({ length: 50 }, (_, i) => ({ event: 'pageview', timestamp: new Date(DAY + i * 60_000).toISOString(), properties: { distinct_id: `visitor-${i}` } }))
      expect((await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))).status).toBe(200)
      await learned(stack, 60_000)
    }, 240_000)
    afterAll(async () => stack?.close())

    const query = (node: Record<string, unknown>) =>
      stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { dateRange: { date_from: '2024-05-01', date_to: '2024-05-10' }, ...node }, refresh: 'force_blocking' } })

    test('20 series with person filters, compared: the persons are scanned once', async () => {
      const pro = { key: 'plan', value: 'pro', operator: 'exact', type: 'person' }
      const series = Array.from({ length: 20 }, (_, i) => ({ kind: 'EventsNode', event: 'pageview', properties: [{ ...pro, value: i % 2 === 0 ? 'pro' : 'enterprise' }] }))
      const before = await scans(stack)
      const started = performance.now()
      const { result: r, worstMs } = await healthWhile(stack, query({ kind: 'TrendsQuery', series, properties: [pro], compareFilter: { compare: true } }))
      const body = await json(r)
      expect(r.status).toBe(200)
      expect(body.results).toHaveLength(40)
      const made = (await scans(stack)) - before
      console.log(`20 series × compare, ${PERSONS} persons: ${made} scan(s), ${(performance.now() - started).toFixed(0)} ms, /_health worst ${worstMs.toFixed(0)} ms`)
      expect(made).toBe(1)
    }, 240_000)

    test('more person filters than MAX_PERSON_FILTERS: refused by name before any scan', async () => {
      const many = Array.from({ length: 10_000 }, (_, i) => ({ key: 'n', value: i, operator: 'exact', type: 'person' }))
      const groups = { type: 'OR', values: Array.from({ length: 100 }, (_, g) => ({ type: 'OR', values: many.slice(g * 100, g * 100 + 100) })) }
      const before = await scans(stack)
      const started = performance.now()
      const { result: r, worstMs } = await healthWhile(stack, query({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'pageview' }], properties: groups }))
      const body = await json(r)
      console.log(`10,000 person filters: ${r.status} in ${(performance.now() - started).toFixed(0)} ms, /_health worst ${worstMs.toFixed(0)} ms`)
      expect(r.status).toBe(400)
      expect(body.attr).toBe(`query__properties__values__0__values__${MAX_PERSON_FILTERS}`)
      expect(body.detail).toContain(String(MAX_PERSON_FILTERS))
      expect((await scans(stack)) - before).toBe(0)

      // spread over the series and a funnel's exclusions: counted over the whole query (the same filter twice: once)
      const per = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ key: 'n', value: from + i, operator: 'exact', type: 'person' }))
      const third = Math.floor(MAX_PERSON_FILTERS / 3)
      const funnel = (exclusion: object[]) =>
        query({ kind: 'FunnelsQuery', series: Array.from({ length: 3 }, (_, s) => ({ kind: 'EventsNode', event: 'pageview', properties: per(third, s * third) })), funnelsFilter: { exclusions: [{ kind: 'EventsNode', event: 'x', funnelFromStep: 0, funnelToStep: 1, properties: exclusion }] } })
      const spread = await funnel(per(5, 1000))
      expect(spread.status).toBe(400)
      expect((await json(spread)).attr).toStartWith('query__funnelsFilter__exclusions__0__properties__')
      expect((await scans(stack)) - before).toBe(0)
      expect((await funnel(per(5))).status).toBe(200)

      // at the cap: answered
      const atCap = await query({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'pageview', properties: per(MAX_PERSON_FILTERS) }] })
      expect(atCap.status).toBe(200)
    }, 240_000)
  })
}
