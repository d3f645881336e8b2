// RetentionQuery and EventsQuery through POST /api/projects/:id/query/ on every store (insights-retention.*.test.ts):
// cohort tables worked out by hand (recurring, first time, a target other than the return, local days across a
// clock change in New York), paging through persons, the row cap, and EventsQuery's members and refusals.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { retentionRunner } from '../../src/insights/retention'
import { InsightsService } from '../../src/insights/service'
import { createProject } from '../../src/projects/repository'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

const NY_KEY = 'phc_retention_new_york_0001'
const ev = (event: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event, timestamp, properties: { distinct_id: distinctId, ...properties },
})

// UTC project: days 0-4 are 6-10 May 2024
export const UTC_EVENTS = [
  ev('$pageview', 'u1', '2024-05-06T10:00:00Z', { $browser: 'Chrome' }),
  ev('$pageview', 'u1', '2024-05-07T10:00:00Z', { $browser: 'Chrome' }),
  ev('$pageview', 'u1', '2024-05-09T23:59:00Z', { $browser: 'Chrome' }),
  ev('$pageview', 'u2', '2024-05-07T00:00:00Z', { $browser: 'Safari' }),
  ev('$pageview', 'u2', '2024-05-08T12:00:00Z', { $browser: 'Safari' }),
  ev('$pageview', 'u3', '2024-05-01T12:00:00Z', { $browser: 'Firefox' }),
  ev('$pageview', 'u3', '2024-05-08T12:00:00Z', { $browser: 'Firefox' }),
  ev('$pageview', 'u3', '2024-05-09T12:00:00Z', { $browser: 'Firefox' }),
  ev('signup', 'u4', '2024-05-06T09:00:00Z', { plan: 'pro' }),
  ev('$pageview', 'u4', '2024-05-08T09:00:00Z', { $browser: 'Chrome' }),
]
// New York project, local days 9, 10 (23 hours: clocks forward) and 11 March 2024
export const NY_EVENTS = [
  ev('$pageview', 'v1', '2024-03-10T04:30:00Z'), // 9 March 23:30 EST
  ev('$pageview', 'v1', '2024-03-11T04:30:00Z'), // 11 March 00:30 EDT
  ev('$pageview', 'v2', '2024-03-11T03:30:00Z'), // 10 March 23:30 EDT
  ev('$pageview', 'v2', '2024-03-11T16:00:00Z'), // 11 March 12:00 EDT
]

/** The tables of these events, worked out by hand (days 6-10 May; New York: 9-11 March, local). */
export const EXPECTED = {
  recurring: [
    [1, 1, 0, 1, 0],
    [2, 1, 1, 0, 0],
    [3, 1, 0, 0, 0],
    [2, 0, 0, 0, 0],
    [0, 0, 0, 0, 0],
  ],
  firstTime: [
    [1, 1, 0, 1, 0],
    [1, 1, 0, 0, 0],
    [1, 0, 0, 0, 0],
    [0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0],
  ],
  newYork: [
    [1, 0, 1],
    [1, 1, 0],
    [2, 0, 0],
  ],
}

export const counts = (body: { results: { values: { count: number }[] }[] }) => body.results.map((row) => row.values.map((v) => v.count))

export function retentionContract(name: string, start: () => Promise<Stack>): void {
  describe(`retention and events queries: ${name}`, () => {
    let stack: Stack
    let newYork: number
    const post = (node: Record<string, unknown>, project: number = 1) =>
      stack.api(`/api/projects/${project}/query/`, { method: 'POST', json: { query: node, refresh: 'force_blocking' } })
    const answer = async (node: Record<string, unknown>, project: number = 1) => {
      const r = await post(node, project)
      const body = await json(r)
      if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`)
      return body
    }
    const retention = (retentionFilter: Record<string, unknown>, dateRange: Record<string, unknown> = { date_from: '2024-05-06', date_to: '2024-05-10' }, project = 1) =>
      answer({ kind: 'RetentionQuery', retentionFilter: { targetEntity: { id: '$pageview', type: 'events' }, returningEntity: { id: '$pageview', type: 'events' }, ...retentionFilter }, dateRange }, project)
    const hogql = async (text: string, project: number) => (await answer({ kind: 'HogQLQuery', query: text }, project)).results as unknown[][]

    beforeAll(async () => {
      const started = performance.now()
      stack = await start()
      newYork = (await createProject(stack.services.db.sql, { name: 'New York', token: NY_KEY })).id
      await stack.services.tokens.invalidate()
      const patched = await stack.api(`/api/projects/${newYork}/`, { method: 'PATCH', json: { timezone: 'America/New_York' } })
      expect(patched.status).toBe(200)
      for (const [key, batch] of [[PROJECT_KEY, UTC_EVENTS], [NY_KEY, NY_EVENTS]] as const) {
        const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: key, batch }) }))
        expect(r.status).toBe(200)
      }
      await learned(stack)
      // the person mapping is copied from Postgres every half second
      for (let i = 0; i < 200; i++) {
        const [[a]] = await hogql('SELECT count(DISTINCT person_id) FROM events', 1)
        const [[b]] = await hogql('SELECT count(DISTINCT person_id) FROM events', newYork)
        if (a === 4 && b === 2) break
        await Bun.sleep(100)
      }
      console.log(`${name}: seeded and mapped in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }, 120_000)
    afterAll(() => stack?.close())

    test('recurring: a cohort for each day with a pageview, returns on the days after', async () => {
      const body = await retention({ period: 'Day', totalIntervals: 5, retentionType: 'retention_recurring' })
      expect(counts(body)).toEqual(EXPECTED.recurring)
      expect(body.results[0]).toEqual({
        values: ['Day 0', 'Day 1', 'Day 2', 'Day 3', 'Day 4'].map((label, k) => ({ count: [1, 1, 0, 1, 0][k], label })),
        label: 'Day 0',
        date: '2024-05-06T00:00:00Z',
      })
      expect(body.results.map((r: { label: string }) => r.label)).toEqual(['Day 0', 'Day 1', 'Day 2', 'Day 3', 'Day 4'])
      expect(body.resolved_date_range).toEqual({ date_from: '2024-05-06T00:00:00Z', date_to: '2024-05-10T23:59:59.999999Z' })
      expect(body.hogql).toContain('ORDER BY person_id, period')
    })

    test('first time: only the day of a person’s first pageview ever (u3’s was before the range)', async () => {
      expect(counts(await retention({ period: 'Day', totalIntervals: 5, retentionType: 'retention_first_time' }))).toEqual(EXPECTED.firstTime)
      const signups = await retention({ period: 'Day', totalIntervals: 3, retentionType: 'retention_first_time', targetEntity: { id: 'signup', type: 'events' } })
      expect(counts(signups)).toEqual([[1, 0, 1], [0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]])
    })

    test('no date_from: the last totalIntervals periods up to date_to; weeks; filters', async () => {
      const days = await retention({ period: 'Day', totalIntervals: 3 }, { date_to: '2024-05-09' })
      expect(days.results.map((r: { date: string }) => r.date)).toEqual(['2024-05-07T00:00:00Z', '2024-05-08T00:00:00Z', '2024-05-09T00:00:00Z'])
      expect(counts(days)).toEqual([[2, 1, 1], [3, 1, 0], [2, 0, 0]])
      const weeks = await retention({ period: 'Week', totalIntervals: 2 }, { date_to: '2024-05-10' })
      expect(weeks.results.map((r: { date: string; label: string }) => [r.date, r.label])).toEqual([['2024-04-28T00:00:00Z', 'Week 0'], ['2024-05-05T00:00:00Z', 'Week 1']])
      expect(counts(weeks)).toEqual([[1, 1], [4, 0]])
      const chrome = await retention({ period: 'Day', totalIntervals: 5 }, { date_from: '2024-05-06', date_to: '2024-05-10' })
      const filtered = await answer({ kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: 5 }, dateRange: { date_from: '2024-05-06', date_to: '2024-05-10' }, properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }] })
      // default entities are $pageview; Chrome pageviews: u1 on days 0, 1, 3 and u4 on day 2
      expect(counts(filtered)).toEqual([[1, 1, 0, 1, 0], [1, 0, 1, 0, 0], [1, 0, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 0]])
      expect(counts(chrome)[2][0]).toBe(3)
    })

    test('New York: local days across the clock change, dated with their offsets', async () => {
      const body = await retention({ period: 'Day', totalIntervals: 3 }, { date_from: '2024-03-09', date_to: '2024-03-11' }, newYork)
      expect(body.results.map((r: { date: string }) => r.date)).toEqual(['2024-03-09T00:00:00-05:00', '2024-03-10T00:00:00-05:00', '2024-03-11T00:00:00-04:00'])
      expect(counts(body)).toEqual(EXPECTED.newYork)
      expect(body.timezone).toBe('America/New_York')
    })

    test('pages of whole persons give the same table; past the row cap a 400 naming it', async () => {
      const node = { kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: 5 }, dateRange: { date_from: '2024-05-06', date_to: '2024-05-10' } }
      const project = { id: 1, timezone: 'UTC', weekStartDay: 0 }
      const paged = new InsightsService(stack.services.query, { cacheTtlMs: 0, cacheMaxBytes: 0 }).register('RetentionQuery', retentionRunner({ pageRows: 4, maxRows: 100 }))
      const body = await paged.run(project, node)
      expect(counts(body as never)).toEqual(counts(await answer(node)))
      // 4 persons' rows (10) read in pages of at most 4 (whole persons): one statement per page
      expect(String(body.hogql).split('ORDER BY person_id, period').length - 1).toBeGreaterThanOrEqual(3)
      const capped = new InsightsService(stack.services.query, { cacheTtlMs: 0, cacheMaxBytes: 0 }).register('RetentionQuery', retentionRunner({ pageRows: 4, maxRows: 5 }))
      const error = await capped.run(project, node).catch((e) => e)
      expect(error).toMatchObject({ status: 400, code: 'too_many_rows', attr: 'query__retentionFilter' })
      expect(error.message ?? error.detail).toMatch(/more than 5 rows/)
    })

    test('retention refusals: unknown fields, too many periods, cohort breakdowns', async () => {
      const unknown = await post({ kind: 'RetentionQuery', retentionFilter: { period: 'Day' }, surprise: 1 })
      expect(unknown.status).toBe(400)
      expect((await json(unknown)).attr).toBe('query__surprise')
      const hours = await post({ kind: 'RetentionQuery', retentionFilter: { period: 'Hour' }, dateRange: { date_from: '2020-01-01', date_to: '2024-01-01' } })
      expect(hours.status).toBe(400)
      // breakdowns by event, person and group properties are answered (insights-groups.contract.ts); by cohort, not
      const breakdown = await post({ kind: 'RetentionQuery', retentionFilter: {}, breakdownFilter: { breakdown: [1], breakdown_type: 'cohort' } })
      expect(breakdown.status).toBe(400)
      expect((await json(breakdown)).attr).toBe('query__breakdownFilter__breakdown_type')
    })

    test('EventsQuery: columns, "*" as PostHog’s object, aggregates grouping the rest, paging', async () => {
      const grouped = await answer({ kind: 'EventsQuery', select: ['event', 'count()'], after: 'all' })
      expect(grouped.columns).toEqual(['event', 'count()'])
      expect(grouped.results).toEqual([['$pageview', 9], ['signup', 1]])
      const star = await answer({ kind: 'EventsQuery', select: ['*', 'properties.$browser AS browser'], event: '$pageview', after: '2024-05-01', before: '2024-05-09', orderBy: ['timestamp ASC'], limit: 2 })
      expect(star.columns).toEqual(['*', 'properties.$browser AS browser'])
      expect(star.hasMore).toBe(true)
      expect(star.results).toHaveLength(2)
      expect(star.results[0][0]).toMatchObject({ event: '$pageview', distinct_id: 'u3', properties: { $browser: 'Firefox' }, team_id: 1, elements_chain: '' })
      expect(typeof star.results[0][0].uuid).toBe('string')
      expect(star.results[0][1]).toBe('Firefox')
      const future = await answer({ kind: 'EventsQuery', select: ['count()'], after: '2024-05-09', before: '2098-01-01' })
      expect(future.results).toEqual([[2]])
      const next = await answer({ kind: 'EventsQuery', select: ['distinct_id'], event: '$pageview', after: '2024-05-01', before: '2024-05-09', orderBy: ['timestamp ASC'], limit: 2, offset: 2 })
      expect(next.results).toEqual([['u2'], ['u1']])
      const filtered = await answer({ kind: 'EventsQuery', select: ['distinct_id', 'count() AS n'], where: ["properties.$browser = 'Chrome'"], after: 'all', orderBy: ['n DESC', 'distinct_id'] })
      expect(filtered.results).toEqual([['u1', 3], ['u4', 1]])
      const inNewYork = await answer({ kind: 'EventsQuery', select: ['distinct_id'], after: '2024-03-10', before: '2024-03-11', orderBy: ['timestamp'] }, newYork)
      // local 10 March: v2's 23:30 EDT, not v1's 23:30 EST of the 9th
      expect(inNewYork.results).toEqual([['v2']])
    })

    test('EventsQuery: the last 24 hours by default; a comment cannot swallow the time condition', async () => {
      expect((await answer({ kind: 'EventsQuery', select: ['event'] })).results).toEqual([])
      expect((await answer({ kind: 'EventsQuery', select: ['event -- '], where: ['1 = 1 --'] })).results).toEqual([])
      expect((await answer({ kind: 'EventsQuery', select: ['event'], orderBy: ['timestamp DESC -- '] })).results).toEqual([])
    })

    test('EventsQuery refusals name the member', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ select: ['event FROM events'] }, 'query__select__0'],
        [{ select: ['event', 'uuid, distinct_id'] }, 'query__select__1'],
        [{ select: ['event'], where: ["1 = 1) OR (1 = 1"] }, 'query__where__0'],
        [{ select: ['event'], where: ['true', "event = 'x'; SELECT 1"] }, 'query__where__1'],
        [{ select: ['event'], orderBy: ['timestamp DESC, event'] }, 'query__orderBy__0'],
        [{ select: ['event'], after: 'yesterday-ish' }, 'query__after'],
        [{ select: ['*', 'count()'] }, 'query__select'],
        [{ select: ['event'], limit: 50_001 }, 'query__limit'],
        [{ select: [] }, 'query__select'],
      ]
      for (const [node, attr] of cases) {
        const r = await post({ kind: 'EventsQuery', ...node })
        const body = await json(r)
        expect([JSON.stringify(node), r.status, body.type, body.attr]).toEqual([JSON.stringify(node), 400, 'validation_error', attr])
      }
    })
  })
}
