// What one trends answer may hold: every result item carries a number, a label and a day for each bucket, so a
// breakdown of 1,000 values over 10,000 hour buckets made 10 million of each (some 450 MB of JSON for one series,
// twenty times that for 20 series) from 1,000 events. Now the items × buckets of an answer are counted as each
// series (and formula) is made, before its arrays are: past MAX_RESULT_CELLS the query is refused by name.
// Timings and sizes are printed; statuses, counts and generous bounds are asserted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_RESULT_CELLS } from '../../src/insights/trends'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

const VALUES = 1_000
const FROM = Date.UTC(2023, 0, 1)
const dateRange = { date_from: '2023-01-01', date_to: '2024-02-10' } // some 9,700 hour buckets

export function insightAnswerSizeContract(name: string, start: () => Promise<Stack>): void {
  describe(`the size of a trends answer (${name})`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await start()
      const batch = Array.from({ length: VALUES }, (_, i) => ({ event: 'pageview', timestamp: new Date(FROM + i * 9 * 3_600_000).toISOString(), properties: { distinct_id: `visitor-${i % 50}`, v: `value-${i}` } }))
      expect((await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))).status).toBe(200)
      await learned(stack, 60_000)
      for (let i = 0; i < 300; i++) {
        const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } } })
        if ((await json(r)).results[0][0] === VALUES) break
        await Bun.sleep(100)
      }
    }, 240_000)
    afterAll(async () => stack?.close())

    const trends = async (node: Record<string, unknown>) => {
      const rssBefore = process.memoryUsage().rss
      const started = performance.now()
      const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'TrendsQuery', interval: 'hour', dateRange, ...node }, refresh: 'force_blocking' } })
      const text = await r.text()
      const figures = `${r.status}, ${(text.length / 1e6).toFixed(1)} MB in ${(performance.now() - started).toFixed(0)} ms, RSS +${((process.memoryUsage().rss - rssBefore) / 1e6).toFixed(0)} MB`
      return { status: r.status, body: JSON.parse(text), bytes: text.length, figures }
    }
    const breakdown = { breakdown: 'v', breakdown_limit: VALUES }

    test('a breakdown of 1,000 values over some 9,700 hour buckets: refused before its arrays are made', async () => {
      const one = await trends({ series: [{ kind: 'EventsNode', event: 'pageview' }], breakdownFilter: breakdown })
      console.log(`1 series × ${VALUES} values × hours: ${one.figures}`)
      expect(one.status).toBe(400)
      expect(one.body.code).toBe('too_many_results')
      expect(one.body.attr).toBe('query__breakdownFilter__breakdown_limit')
      expect(one.body.detail).toContain(MAX_RESULT_CELLS.toLocaleString('en-US'))

      const twenty = await trends({ series: Array.from({ length: 20 }, () => ({ kind: 'EventsNode', event: 'pageview' })), breakdownFilter: breakdown, compareFilter: { compare: true } })
      console.log(`20 series × compare × ${VALUES} values × hours: ${twenty.figures}`)
      expect(twenty.status).toBe(400)
      expect(twenty.bytes).toBeLessThan(10_000)
    }, 240_000)

    test('within the budget: answered whole (values × buckets × series counted together, formulas too)', async () => {
      const days = await trends({ interval: 'day', series: [{ kind: 'EventsNode', event: 'pageview' }], breakdownFilter: breakdown })
      console.log(`1 series × ${VALUES} values × days: ${days.figures}`)
      expect(days.status).toBe(200)
      expect(days.body.results).toHaveLength(VALUES)
      expect(days.body.results.reduce((n: number, r: { count: number }) => n + r.count, 0)).toBe(VALUES)

      // 20 series × compare over hours, no breakdown: 40 items of 9,768 buckets
      const series = Array.from({ length: 20 }, () => ({ kind: 'EventsNode', event: 'pageview' }))
      const many = await trends({ series, compareFilter: { compare: true } })
      console.log(`20 series × compare × hours: ${many.figures}`)
      expect(many.status).toBe(200)
      expect(many.body.results).toHaveLength(40)
      expect(many.body.results[0].data.length).toBeGreaterThan(9_000)
      expect(many.body.results[0].data).toHaveLength(many.body.results[39].days.length)

      // formulas' items count too: 10 formulas per breakdown value
      const formulas = Array.from({ length: 10 }, (_, i) => `A + ${i}`)
      const withFormulas = await trends({ interval: 'day', series: [{ kind: 'EventsNode', event: 'pageview' }], breakdownFilter: { breakdown: 'v', breakdown_limit: 300 }, trendsFilter: { formulas }, compareFilter: { compare: true } })
      console.log(`formulas × 300 values × days × compare: ${withFormulas.figures}`)
      expect(withFormulas.status).toBe(400)
      expect(withFormulas.body.attr).toBe('query__trendsFilter__formula')
    }, 240_000)
  })
}
