// Web analytics (WebOverviewQuery, WebStatsTableQuery) through POST /api/projects/:id/query/ on every store
// (insights-web.*.test.ts): sessions from $session_id, PostHog's bounce rule, visitors as persons, compare periods,
// breakdowns by page, entry page and browser; counted by hand below.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

const ev = (event: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event,
  timestamp,
  properties: { distinct_id: distinctId, ...properties },
})

const page = (distinctId: string, timestamp: string, session: string, pathname: string, browser: string) =>
  ev('$pageview', distinctId, timestamp, { $session_id: session, $pathname: pathname, $browser: browser })

export const WEB_EVENTS = [
  // the day before: one bounced session (the previous period)
  page('v2', '2024-05-09T09:00:00Z', 's0', '/home', 'Safari'),
  // s1: two pages, 30 s
  page('u1', '2024-05-10T10:00:00Z', 's1', '/home', 'Chrome'),
  page('u1', '2024-05-10T10:00:30Z', 's1', '/pricing', 'Chrome'),
  // s2: one page, nothing else: bounced
  page('v2', '2024-05-10T11:00:00Z', 's2', '/home', 'Safari'),
  // s3: one page and a click 5 s later: not bounced (an interaction)
  page('u1', '2024-05-10T12:00:00Z', 's3', '/docs', 'Chrome'),
  ev('$autocapture', 'u1', '2024-05-10T12:00:05Z', { $session_id: 's3', $browser: 'Chrome' }),
  // s4: one page and another event 20 s later: not bounced (10 s or longer)
  page('v3', '2024-05-10T13:00:00Z', 's4', '/home', 'Firefox'),
  ev('signed_up', 'v3', '2024-05-10T13:00:20Z', { $session_id: 's4' }),
  // no session: not in web analytics
  ev('$pageview', 'v4', '2024-05-10T14:00:00Z', { $pathname: '/home' }),
]
const RANGE = { date_from: '2024-05-10', date_to: '2024-05-10' }

/** An answer of the query API's node (the envelope included), from whichever store. */
export type RunQuery = (query: Record<string, unknown>) => Promise<any>

/** The answers every store must give for WEB_EVENTS (a UTC project). */
export const WEB_CHECKS: Record<string, (post: RunQuery) => Promise<void>> = {
  'overview: visitors, views, sessions, duration, bounce rate, against the day before': async (post) => {
    const body = await post({ kind: 'WebOverviewQuery', dateRange: RANGE, compareFilter: { compare: true } })
    const byKey = Object.fromEntries(body.results.map((r: { key: string }) => [r.key, r]))
    expect(byKey.visitors).toEqual({ key: 'visitors', kind: 'unit', value: 3, previous: 1, changeFromPreviousPct: 200, isIncreaseBad: null })
    expect(byKey.views).toMatchObject({ value: 5, previous: 1, changeFromPreviousPct: 400 })
    expect(byKey.sessions).toMatchObject({ value: 4, previous: 1, changeFromPreviousPct: 300 })
    expect(byKey['session duration']).toMatchObject({ kind: 'duration_s', value: 13.75, previous: 0, changeFromPreviousPct: null })
    expect(byKey['bounce rate']).toMatchObject({ kind: 'percentage', value: 25, previous: 100, changeFromPreviousPct: -75, isIncreaseBad: true })
    expect(body.results.map((r: { key: string }) => r.key)).toEqual(['visitors', 'views', 'sessions', 'session duration', 'bounce rate'])
    expect(body.dateFrom).toStartWith('2024-05-10T00:00:00')
    // without compare: no previous figures
    const alone = await post({ kind: 'WebOverviewQuery', dateRange: RANGE })
    expect(alone.results[0]).toMatchObject({ value: 3, previous: null, changeFromPreviousPct: null })
    // a day with nothing: zeros, and no duration or bounce rate to show
    const empty = await post({ kind: 'WebOverviewQuery', dateRange: { date_from: '2024-05-20', date_to: '2024-05-20' } })
    expect(empty.results.map((r: { value: unknown }) => r.value)).toEqual([0, 0, 0, null, null])
  },
  'pages: visitors and views per pathname, bounce rate of the sessions entering there, the previous period beside': async (post) => {
    const body = await post({ kind: 'WebStatsTableQuery', breakdownBy: 'Page', dateRange: RANGE, includeBounceRate: true, compareFilter: { compare: true } })
    expect(body.columns).toEqual([
      'context.columns.breakdown_value',
      'context.columns.visitors',
      'context.columns.views',
      'context.columns.bounce_rate',
      'context.columns.ui_fill_fraction',
      'context.columns.cross_sell',
    ])
    const rows = body.results.map((r: unknown[]) => [r[0], r[1], r[2], (r[3] as [number | null, unknown])[0] === null ? null : Math.round((r[3] as [number])[0]), r[4]])
    expect(rows).toEqual([
      ['/home', [3, 1], [3, 1], 33, 0.6],
      ['/docs', [1, 0], [1, 0], 0, 0.2],
      ['/pricing', [1, 0], [1, 0], null, 0.2],
    ])
    expect(body.hasMore).toBe(false)
    const first = await post({ kind: 'WebStatsTableQuery', breakdownBy: 'Page', dateRange: RANGE, limit: 1 })
    expect(first.results.map((r: unknown[]) => r[0])).toEqual(['/home'])
    expect(first.hasMore).toBe(true)
  },
  'entry pages and browsers: a session counted once, by its first event': async (post) => {
    const entry = await post({ kind: 'WebStatsTableQuery', breakdownBy: 'InitialPage', dateRange: RANGE, includeBounceRate: true })
    expect(entry.results.map((r: unknown[]) => [r[0], (r[1] as number[])[0], (r[2] as number[])[0], Math.round((r[3] as number[])[0]!)])).toEqual([
      ['/home', 3, 4, 33],
      ['/docs', 1, 1, 0],
    ])
    const browsers = await post({ kind: 'WebStatsTableQuery', breakdownBy: 'Browser', dateRange: RANGE })
    expect(browsers.results.map((r: unknown[]) => [r[0], (r[1] as number[])[0], (r[2] as number[])[0]])).toEqual([
      ['Chrome', 1, 3],
      ['Firefox', 1, 1],
      ['Safari', 1, 1],
    ])
  },
  'exit pages: a session counted once, by the last of its events that has a page (a click or signup after it is not one)': async (post) => {
    // s1 leaves on /pricing, s2 on /home, s3 on /docs (its click has no page), s4 on /home (its signup has none)
    const exits = await post({ kind: 'WebStatsTableQuery', breakdownBy: 'ExitPage', dateRange: RANGE, includeBounceRate: true, compareFilter: { compare: true } })
    expect(exits.results.map((r: unknown[]) => [r[0], r[1], r[2], (r[3] as number[])[0]])).toEqual([
      ['/home', [2, 1], [2, 1], 50],
      ['/pricing', [1, 0], [2, 0], 0],
      ['/docs', [1, 0], [1, 0], 0],
    ])
  },
}

export function insightsWebContract(name: string, start: () => Promise<Stack>): void {
  describe(`web analytics: ${name}`, () => {
    let stack: Stack
    const post = async (query: Record<string, unknown>) => {
      const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query, refresh: 'force_blocking' } })
      const body = await json(r)
      if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`)
      return body
    }

    beforeAll(async () => {
      stack = await start()
      const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: WEB_EVENTS }) }))
      expect(r.status).toBe(200)
      await learned(stack)
      for (let i = 0; i < 200; i++) {
        const body = await post({ kind: 'HogQLQuery', query: 'SELECT count(), count(DISTINCT person_id) FROM events' })
        if (body.results?.[0]?.[0] === WEB_EVENTS.length && body.results?.[0]?.[1] === 4) break
        await Bun.sleep(100)
      }
    }, 120_000)
    afterAll(() => stack?.close())

    for (const [title, check] of Object.entries(WEB_CHECKS)) test(title, () => check(post))

    test('refusals by name: an unknown breakdown, an order PostHog has but phog does not compute', async () => {
      const unknown = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'WebStatsTableQuery', breakdownBy: 'Nope', dateRange: RANGE } } })
      expect(unknown.status).toBe(400)
      expect((await json(unknown)).attr).toContain('breakdownBy')
      const order = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'WebStatsTableQuery', breakdownBy: 'Page', dateRange: RANGE, orderBy: ['RageClicks', 'DESC'] } } })
      expect(order.status).toBe(400)
      expect(await json(order)).toMatchObject({ attr: 'query__orderBy' })
    })
  })
}
