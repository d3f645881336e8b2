// TrendsQuery through POST /api/projects/:id/query/ on every store (insights-trends.*.test.ts): buckets in the
// project's timezone (days that differ from UTC's), every bucket present, math, breakdowns with "other" and "null",
// property filters, compare, formulas, total-value displays, the envelope and its cache, refusals by name.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

const ev = (event: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event, timestamp, properties: { distinct_id: distinctId, ...properties },
})

// around New York's clock change (2024-03-10 02:00 EST → 03:00 EDT); the UTC days differ from New York's
export const TREND_EVENTS = [
  ev('$pageview', 'anon-a', '2024-03-09T04:30:00Z', { $browser: 'Chrome' }), // NY: Mar 8 23:30
  ev('$pageview', 'anon-a', '2024-03-09T05:30:00Z', { $browser: 'Chrome', n: 2, $session_id: 's1' }), // NY: Mar 9 00:30
  ev('$pageview', 'user-b', '2024-03-10T12:00:00Z', { $browser: 'Safari', n: 3, $session_id: 's2', $set: { plan: 'pro' } }), // NY: Mar 10 08:00
  ev('$pageview', 'user-b', '2024-03-10T13:00:00Z', { $browser: 'Firefox', n: 5, $session_id: 's2' }), // NY: Mar 10 09:00
  ev('signup', 'user-b', '2024-03-11T03:00:00Z', { plan: 'pro' }), // NY: Mar 10 23:00
  ev('$pageview', 'anon-c', '2024-03-11T05:00:00Z', {}), // NY: Mar 11 01:00
  // anon-a signs in as user-a mid-range: one person from then on, also for anon-a's earlier events
  ev('$identify', 'user-a', '2024-03-10T14:00:00Z', { $anon_distinct_id: 'anon-a' }), // NY: Mar 10 10:00
  ev('$pageview', 'user-a', '2024-03-11T04:00:00Z', { $browser: 'Chrome' }), // NY: Mar 11 00:00
]
const RANGE = { date_from: '2024-03-08', date_to: '2024-03-11' }
const pageviews = { kind: 'EventsNode', event: '$pageview' }

export function insightsTrendsContract(name: string, start: () => Promise<Stack>): void {
  describe(`trends: ${name}`, () => {
    let stack: Stack
    const post = (query: Record<string, unknown>, refresh: unknown = 'force_blocking') =>
      stack.api('/api/projects/1/query/', { method: 'POST', json: { query, refresh } })
    const trends = async (extra: Record<string, unknown>, refresh?: unknown) => {
      const r = await post({ kind: 'TrendsQuery', series: [pageviews], dateRange: RANGE, ...extra }, refresh)
      const body = await json(r)
      if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`)
      return body
    }
    const data = async (extra: Record<string, unknown>) => (await trends(extra)).results.map((r: { data: number[] }) => r.data)
    const setTimezone = async (timezone: string) => {
      const r = await stack.api('/api/projects/1/', { method: 'PATCH', json: { timezone } })
      expect(r.status).toBe(200)
    }

    beforeAll(async () => {
      stack = await start()
      const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: TREND_EVENTS }) }))
      expect(r.status).toBe(200)
      await learned(stack)
      // the events are flushed and their persons mapped (copied every half second)
      for (let i = 0; i < 200; i++) {
        const body = await json(post({ kind: 'HogQLQuery', query: 'SELECT count(), count(DISTINCT person_id) FROM events' }))
        if (body.results?.[0]?.[0] === 8 && body.results?.[0]?.[1] === 3) break
        await Bun.sleep(100)
      }
    }, 120_000)
    afterAll(() => stack?.close())

    test('days in UTC, then in the project\'s timezone: every bucket, PostHog\'s days and labels, the envelope', async () => {
      await setTimezone('UTC')
      const utc = await trends({})
      expect(utc.results).toHaveLength(1)
      expect(utc.results[0]).toMatchObject({
        data: [0, 2, 2, 2],
        days: ['2024-03-08', '2024-03-09', '2024-03-10', '2024-03-11'],
        labels: ['8-Mar-2024', '9-Mar-2024', '10-Mar-2024', '11-Mar-2024'],
        count: 6,
        label: '$pageview',
        action: { id: '$pageview', type: 'events', order: 0, math: 'total' },
      })
      expect(utc).toMatchObject({ timezone: 'UTC', is_cached: false, resolved_date_range: { date_from: '2024-03-08T00:00:00Z' } })
      await setTimezone('America/New_York')
      const ny = await trends({})
      expect(ny.results[0].data).toEqual([1, 1, 2, 2])
      expect(ny).toMatchObject({
        timezone: 'America/New_York',
        resolved_date_range: { date_from: '2024-03-08T00:00:00-05:00', date_to: '2024-03-11T23:59:59.999999-04:00' },
      })
      expect(ny.hogql).toContain('SELECT')
      // the same question again is answered from the cache, unless asked to refresh
      // (the answer just computed was kept)
      expect(await trends({}, 'blocking')).toMatchObject({ is_cached: true, results: [{ data: [1, 1, 2, 2] }] })
      expect((await trends({ interval: 'day' }, 'blocking')).is_cached).toBe(false)
      expect((await trends({}, 'force_blocking')).is_cached).toBe(false)
    })

    test('math: distinct persons, sessions, sums and averages of a property', async () => {
      await setTimezone('America/New_York')
      // anon-a and user-a are one person: counted once on Mar 11 with anon-c
      expect(await data({ series: [{ ...pageviews, math: 'dau' }] })).toEqual([[1, 1, 1, 2]])
      expect(await data({ series: [{ ...pageviews, math: 'unique_session' }] })).toEqual([[0, 1, 1, 0]])
      expect(await data({ series: [{ ...pageviews, math: 'sum', math_property: 'n' }] })).toEqual([[0, 2, 8, 0]])
      expect(await data({ series: [{ ...pageviews, math: 'max', math_property: 'n' }] })).toEqual([[0, 2, 5, 0]])
      expect(await data({ series: [{ kind: 'EventsNode', event: null }] })).toEqual([[1, 1, 4, 2]])
      // the persons of the 7 (30) local days ending with each day: on Mar 11 anon-a/user-a, user-b, anon-c (the merge
      // makes anon-a's Mar 8-9 and user-a's Mar 11 one person)
      expect(await data({ series: [{ ...pageviews, math: 'weekly_active' }] })).toEqual([[1, 1, 2, 3]])
      expect(await data({ series: [{ ...pageviews, math: 'monthly_active' }] })).toEqual([[1, 1, 2, 3]])
      expect((await trends({ series: [{ ...pageviews, math: 'weekly_active' }], trendsFilter: { display: 'BoldNumber' } })).results[0].aggregated_value).toBe(3)
      expect(await data({ series: [{ ...pageviews, math: 'median', math_property: 'n' }] })).toEqual([[0, 2, 4, 0]])
      expect(await data({ series: [{ ...pageviews, math: 'p90', math_property: 'n' }] })).toEqual([[0, 2, 4.8, 0]])
    })

    test('intervals: hours and weeks (Sunday or Monday) in the project\'s timezone', async () => {
      await setTimezone('America/New_York')
      const hours = await trends({ interval: 'hour', dateRange: { date_from: '2024-03-10T07:00:00', date_to: '2024-03-10T09:00:00', explicitDate: true } })
      expect(hours.results[0]).toMatchObject({ data: [0, 1, 1], days: ['2024-03-10 07:00:00', '2024-03-10 08:00:00', '2024-03-10 09:00:00'], labels: ['10-Mar 07:00', '10-Mar 08:00', '10-Mar 09:00'] })
      const sunday = await trends({ interval: 'week', dateRange: { date_from: '2024-03-03', date_to: '2024-03-16' } })
      expect(sunday.results[0]).toMatchObject({ data: [2, 4], days: ['2024-03-03', '2024-03-10'] })
      const r = await stack.api('/api/projects/1/', { method: 'PATCH', json: { week_start_day: 1 } })
      expect(r.status).toBe(200)
      const monday = await trends({ interval: 'week', dateRange: { date_from: '2024-03-04', date_to: '2024-03-17' } })
      expect(monday.results[0]).toMatchObject({ data: [4, 2], days: ['2024-03-04', '2024-03-11'] })
      await stack.api('/api/projects/1/', { method: 'PATCH', json: { week_start_day: 0 } })
    })

    test('breakdown by an event property: the largest values, "other" and "null"', async () => {
      await setTimezone('America/New_York')
      const all = await trends({ breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })
      expect(all.results.map((r: { breakdown_value: string; data: number[] }) => [r.breakdown_value, r.data])).toEqual([
        ['Chrome', [1, 1, 0, 1]],
        ['$$_posthog_breakdown_null_$$', [0, 0, 0, 1]],
        ['Firefox', [0, 0, 1, 0]],
        ['Safari', [0, 0, 1, 0]],
      ])
      const limited = await trends({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 2 } })
      expect(limited.results.map((r: { breakdown_value: string; data: number[]; label: string }) => [r.breakdown_value, r.label, r.data])).toEqual([
        ['Chrome', 'Chrome', [1, 1, 0, 1]],
        ['$$_posthog_breakdown_null_$$', '$$_posthog_breakdown_null_$$', [0, 0, 0, 1]],
        ['$$_posthog_breakdown_other_$$', '$$_posthog_breakdown_other_$$', [0, 0, 2, 0]],
      ])
      const pie = await trends({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 }, trendsFilter: { display: 'ActionsPie' } })
      expect(pie.results.map((r: { breakdown_value: string; aggregated_value: number }) => [r.breakdown_value, r.aggregated_value])).toEqual([['Chrome', 3], ['$$_posthog_breakdown_other_$$', 3]])
    })

    test('breakdown by a person property: the person\'s value now, every math combined exactly', async () => {
      await setTimezone('America/New_York')
      const values = (body: { results: { breakdown_value: string; data: number[]; aggregated_value?: number }[] }) => body.results.map((r) => [r.breakdown_value, r.aggregated_value ?? r.data])
      const person = { breakdown: 'plan', breakdown_type: 'person' }
      expect(values(await trends({ breakdownFilter: person }))).toEqual([
        ['$$_posthog_breakdown_null_$$', [1, 1, 0, 2]],
        ['pro', [0, 0, 2, 0]],
      ])
      expect(values(await trends({ series: [{ ...pageviews, math: 'dau' }], breakdownFilter: person }))).toEqual([
        ['$$_posthog_breakdown_null_$$', [1, 1, 0, 2]],
        ['pro', [0, 0, 1, 0]],
      ])
      // ranked by the math itself: pro's average (4) is the larger
      expect(values(await trends({ series: [{ ...pageviews, math: 'avg', math_property: 'n' }], breakdownFilter: person }))).toEqual([
        ['pro', [0, 0, 4, 0]],
        ['$$_posthog_breakdown_null_$$', [0, 2, 0, 0]],
      ])
      expect(values(await trends({ series: [{ ...pageviews, math: 'dau' }], breakdownFilter: { ...person, breakdown_limit: 1 }, trendsFilter: { display: 'ActionsTable' } }))).toEqual([
        ['$$_posthog_breakdown_null_$$', 2],
        ['$$_posthog_breakdown_other_$$', 1],
      ])
    })

    test('property filters with PostHog\'s operators; hostile keys and values are only values', async () => {
      await setTimezone('America/New_York')
      expect(await data({ properties: [{ key: '$browser', value: ['Chrome', 'Safari'], operator: 'exact', type: 'event' }] })).toEqual([[1, 1, 1, 1]])
      expect(await data({ properties: [{ key: '$browser', value: 'fire', operator: 'icontains' }] })).toEqual([[0, 0, 1, 0]])
      expect(await data({ properties: [{ key: '$browser', value: 'Chrome', operator: 'is_not' }] })).toEqual([[0, 0, 2, 1]])
      expect(await data({ properties: [{ key: '$browser', operator: 'is_not_set' }] })).toEqual([[0, 0, 0, 1]])
      expect(await data({ properties: [{ key: 'n', value: 2, operator: 'gt' }] })).toEqual([[0, 0, 2, 0]])
      expect(await data({ series: [{ ...pageviews, properties: [{ key: 'n', value: 3, operator: 'lte' }] }] })).toEqual([[0, 1, 1, 0]])
      expect(await data({ properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: '$browser', value: 'Safari' }] }, { type: 'AND', values: [{ key: 'n', value: 2 }] }] } })).toEqual([[0, 1, 1, 0]])
      expect(await data({ properties: [{ key: "a'b) OR (1", value: "x') OR 1=1 --", operator: 'exact' }] })).toEqual([[0, 0, 0, 0]])
      const quoted = await post({ kind: 'TrendsQuery', series: [pageviews], dateRange: RANGE, properties: [{ key: 'a"b\\', value: 'x' }] })
      expect(quoted.status).toBe(400)
      expect((await json(quoted)).attr).toBe('query__properties__0__key')
      expect(await data({ properties: [{ key: '$browser', value: '%', operator: 'icontains' }] })).toEqual([[0, 0, 0, 0]])
    })

    test('person and cohort filters: the persons they hold, found where persons live', async () => {
      await setTimezone('America/New_York')
      expect(await data({ properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] })).toEqual([[0, 0, 2, 0]])
      expect(await data({ properties: [{ key: 'plan', value: 'pro', operator: 'is_not', type: 'person' }] })).toEqual([[1, 1, 0, 2]])
      const created = await stack.api('/api/projects/1/cohorts/', {
        method: 'POST',
        json: { name: 'Pro', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }] } } },
      })
      if (created.status !== 201) throw new Error(JSON.stringify(await json(created)))
      const cohort = (await json(created)).id
      expect(await data({ series: [{ ...pageviews, properties: [{ key: 'id', value: cohort, type: 'cohort' }] }] })).toEqual([[0, 0, 2, 0]])
      expect(await data({ properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'id', value: cohort, type: 'cohort' }] }, { type: 'AND', values: [{ key: '$browser', value: 'Chrome' }] }] } })).toEqual([[1, 1, 2, 1]])
    })

    test('compare with the previous period; formulas; a total-value display', async () => {
      await setTimezone('America/New_York')
      const compared = await trends({ dateRange: { date_from: '2024-03-10', date_to: '2024-03-11' }, compareFilter: { compare: true } })
      expect(compared.results.map((r: { compare_label: string; data: number[]; days: string[] }) => [r.compare_label, r.data, r.days])).toEqual([
        ['current', [2, 2], ['2024-03-10', '2024-03-11']],
        ['previous', [1, 1], ['2024-03-08', '2024-03-09']],
      ])
      const formula = await trends({ series: [pageviews, { kind: 'EventsNode', event: 'signup' }], trendsFilter: { formula: 'A + B * 10' } })
      expect(formula.results).toHaveLength(1)
      expect(formula.results[0]).toMatchObject({ data: [1, 1, 12, 2], label: 'A + B * 10', count: 16 })
      const ratio = await trends({ series: [pageviews, { kind: 'EventsNode', event: 'signup' }], trendsFilter: { formula: 'B / A' } })
      expect(ratio.results[0].data).toEqual([0, 0, 0.5, 0])
      const bold = await trends({ trendsFilter: { display: 'BoldNumber' } })
      expect(bold.results[0]).toMatchObject({ aggregated_value: 6, data: [] })
      const boldDau = await trends({ series: [{ ...pageviews, math: 'dau' }], trendsFilter: { display: 'BoldNumber' } })
      expect(boldDau.results[0].aggregated_value).toBe(3)
    })

    test('refusals name the member: unknown kind, unknown field, bad math, bad dates, bad formula', async () => {
      const refusal = async (query: Record<string, unknown>) => {
        const r = await post(query)
        const body = await json(r)
        expect(r.status).toBe(400)
        expect(body.type).toBe('validation_error')
        return body as { attr: string; detail: string }
      }
      expect((await refusal({ kind: 'PathsQuery', pathsFilter: {} })).attr).toBe('query__kind')
      expect((await refusal({ kind: 'TrendsQuery', series: [{ ...pageviews, bogus: 1 }] })).attr).toBe('query__series__0__bogus')
      expect((await refusal({ kind: 'TrendsQuery', series: [{ ...pageviews, math: 'sum' }] })).attr).toBe('query__series__0__math_property')
      expect((await refusal({ kind: 'TrendsQuery', series: [{ ...pageviews, math: 'median', math_property: 'n' }], breakdownFilter: { breakdown: '$browser' } })).attr).toBe('query__series__0__math')
      expect((await refusal({ kind: 'TrendsQuery', series: [pageviews], dateRange: { date_from: 'yesterday-ish' } })).attr).toBe('dateRange')
      expect((await refusal({ kind: 'TrendsQuery', series: [pageviews], trendsFilter: { formula: 'A + C' } })).attr).toBe('query__trendsFilter__formula')
      expect((await refusal({ kind: 'TrendsQuery', series: [pageviews], interval: 'hour', dateRange: { date_from: '2000-01-01', date_to: '2024-01-01' } })).attr).toBe('interval')
    })
  })
}
