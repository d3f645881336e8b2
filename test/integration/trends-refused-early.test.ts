// A trends answer too large (past MAX_RESULT_CELLS) is refused before the statements that would have made it: the
// statements the insights service ran are counted through a wrapped query service over a real (embedded) store.
// A breakdown's values are read first, no more of them than the answer has room for; every period and formula is
// counted before any statement per bucket runs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ApiError } from '../../src/http/errors'
import { InsightsService } from '../../src/insights/service'
import { MAX_RESULT_CELLS, runTrends } from '../../src/insights/trends'
import type { QueryService } from '../../src/query/service'
import { BASE, json, learned, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

const VALUES = 1_000
const FROM = Date.UTC(2023, 0, 1)
const hours = { date_from: '2023-01-01', date_to: '2024-02-10' } // 406 days, 9,744 hours
const pageviews = { kind: 'EventsNode', event: 'pageview' }

describe('trends refused before the statements that would make a too large answer', () => {
  let stack: Stack
  let insights: InsightsService
  const statements: string[] = []
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 })
    const batch = Array.from({ length: VALUES }, (_, i) => ({ event: 'pageview', timestamp: new Date(FROM + i * 9 * 3_600_000).toISOString(), properties: { distinct_id: `visitor-${i % 50}`, v: `value-${i}` } }))
    expect((await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))).status).toBe(200)
    await learned(stack, 60_000)
    for (let i = 0; i < 300; i++) {
      const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } } })
      if ((await json(r)).results?.[0]?.[0] === VALUES) break
      await Bun.sleep(100)
    }
    // every statement the trends runner sends to the store, in order
    const query = stack.services.query
    const counted = {
      run: (teamId: number, text: string, signal?: AbortSignal) => {
        statements.push(text)
        return query.run(teamId, text, signal)
      },
    } as unknown as QueryService
    insights = new InsightsService(counted, { cacheTtlMs: 0, cacheMaxBytes: 0 }).register('TrendsQuery', runTrends)
  }, 240_000)
  afterAll(async () => stack?.close())

  const project = { id: 1, timezone: 'UTC', weekStartDay: 0 }
  /** the refusal, and the statements run to reach it */
  const refused = async (node: Record<string, unknown>) => {
    statements.length = 0
    const started = performance.now()
    try {
      await insights.run(project, { kind: 'TrendsQuery', ...node })
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      console.log(`[trends] refused in ${(performance.now() - started).toFixed(0)} ms after ${statements.length} statements: ${error.code} (${error.attr})`)
      return { code: error.code, attr: error.attr, detail: error.detail, statements: [...statements] }
    }
    throw new Error(`answered after ${statements.length} statements`)
  }
  const perBucket = (texts: string[]) => texts.filter((t) => /GROUP BY bucket/.test(t))
  const valuesRead = (texts: string[]) => texts.filter((t) => /GROUP BY breakdown_value ORDER BY/.test(t))

  test('1,000 values over 9,744 hours: the values are read no further than the 102 there is room for, and nothing else runs', async () => {
    const out = await refused({ interval: 'hour', dateRange: hours, series: [pageviews], breakdownFilter: { breakdown: 'v', breakdown_limit: VALUES } })
    expect(out).toMatchObject({ code: 'too_many_results', attr: 'query__breakdownFilter__breakdown_limit' })
    expect(out.detail).toContain(MAX_RESULT_CELLS.toLocaleString('en-US'))
    expect(out.statements).toHaveLength(1)
    // room for floor(1,000,000 / 9,744) = 102 values: one more is asked for, to know that there are more
    expect(valuesRead(out.statements)[0]).toEndWith('LIMIT 103')
    expect(perBucket(out.statements)).toEqual([])
  })

  test('series that fit one by one but not together: every series\' values read, no statement per bucket', async () => {
    // 1,000 values × 406 days each: two series fit (812,000 numbers), the third does not
    const series = [pageviews, pageviews, pageviews]
    const out = await refused({ interval: 'day', dateRange: hours, series, breakdownFilter: { breakdown: 'v', breakdown_limit: VALUES } })
    expect(out).toMatchObject({ code: 'too_many_results', attr: 'query__breakdownFilter__breakdown_limit' })
    expect(valuesRead(out.statements)).toHaveLength(3)
    expect(perBucket(out.statements)).toEqual([])
  })

  test('formulas counted from the values read: refused naming the formula, before the statement per bucket', async () => {
    // 300 values and "other" × 406 days for the series, ten times that for ten formulas
    const formulas = Array.from({ length: 10 }, (_, i) => `A + ${i}`)
    const out = await refused({ interval: 'day', dateRange: hours, series: [pageviews], breakdownFilter: { breakdown: 'v', breakdown_limit: 300 }, trendsFilter: { formulas } })
    expect(out).toMatchObject({ code: 'too_many_results', attr: 'query__trendsFilter__formula' })
    expect(out.statements).toHaveLength(1)
    expect(perBucket(out.statements)).toEqual([])
  })

  test('the previous period is counted before the current one runs its statements', async () => {
    // 187 days of hours (4,488 buckets) with some 500 values in each period: 150 values and "other" fit the current
    // period (677,688 numbers), the previous period's do not fit beside them
    const half = { date_from: '2023-07-08', date_to: '2024-01-10' }
    const out = await refused({ interval: 'hour', dateRange: half, series: [pageviews], breakdownFilter: { breakdown: 'v', breakdown_limit: 150 }, compareFilter: { compare: true } })
    expect(out).toMatchObject({ code: 'too_many_results', attr: 'query__breakdownFilter__breakdown_limit' })
    expect(valuesRead(out.statements)).toHaveLength(2)
    expect(perBucket(out.statements)).toEqual([])
  })

  test('within the budget: the same answer as ever, from the values statement and one per bucket', async () => {
    statements.length = 0
    const answer = (await insights.run(project, { kind: 'TrendsQuery', interval: 'day', dateRange: hours, series: [pageviews], breakdownFilter: { breakdown: 'v', breakdown_limit: VALUES } })) as { results: { count: number; data: number[] }[] }
    expect(answer.results).toHaveLength(VALUES)
    expect(answer.results.reduce((n, r) => n + r.count, 0)).toBe(VALUES)
    expect(answer.results[0]!.data).toHaveLength(406)
    expect(valuesRead(statements)).toHaveLength(1)
    expect(valuesRead(statements)[0]).toEndWith(`LIMIT ${VALUES + 1}`)
    expect(perBucket(statements)).toHaveLength(1)
    // a breakdown past its limit still answers its "other"
    statements.length = 0
    const limited = (await insights.run(project, { kind: 'TrendsQuery', interval: 'day', dateRange: hours, series: [pageviews], breakdownFilter: { breakdown: 'v', breakdown_limit: 10 } })) as { results: { breakdown_value: string; count: number }[] }
    expect(limited.results).toHaveLength(11)
    expect(limited.results[10]).toMatchObject({ breakdown_value: '$$_posthog_breakdown_other_$$', count: VALUES - 10 })
    expect(statements).toHaveLength(2)
  })
})
