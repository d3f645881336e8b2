// StickinessQuery on the current ClickHouse engine (chDB, in-process), over the lifecycle contract's events as
// insights-lifecycle.chdb.test.ts stores them, with the stickiness contract's answers.
import { expect, test } from 'bun:test'
import { chdbInsights, CHDB_TEAMS, seedChdb } from './insights-lifecycle-chdb'
import { ALL_FIVE_YEARS, FIVE_YEAR_DAYS, MONTHS, NY_DAYS, SUNDAY_WEEKS } from './insights-lifecycle.contract'
import { expected } from './insights-stickiness.contract'
import { describeWithChdb } from '../helpers/chdb'

describeWithChdb('stickiness on chDB', () => {
  test('days, weeks, months, intervalCount, criteria, compare and five years as on the other stores', async () => {
    const { query, persons, close } = await seedChdb('stickiness')
    const insights = chdbInsights(query, persons)
    const newYork = { id: CHDB_TEAMS.newYork, timezone: 'America/New_York', weekStartDay: 0 }
    const personless = await insights.run(newYork, { kind: 'HogQLQuery', query: "SELECT count(DISTINCT person_id) FROM events WHERE distinct_id = 'anon-e'" }).catch(() => null)
    const want = expected(Number((personless as { results: unknown[][] } | null)?.results[0][0] ?? 0))
    const pageviews = { kind: 'EventsNode', event: '$pageview' }
    const run = async (extra: Record<string, unknown>, project = newYork) =>
      ((await insights.run(project, { kind: 'StickinessQuery', series: [pageviews], dateRange: NY_DAYS, ...extra })).results as { data: number[]; compare_label?: string }[])
    const data = async (extra: Record<string, unknown>) => (await run(extra)).map((r) => r.data)
    expect(await data({})).toEqual([want.days])
    expect(await data({ stickinessFilter: { computedAs: 'cumulative' } })).toEqual([want.cumulative])
    expect(await data({ interval: 'week', dateRange: SUNDAY_WEEKS })).toEqual([want.weeks])
    expect(await data({ interval: 'month', dateRange: MONTHS })).toEqual([want.months])
    expect(await data({ intervalCount: 2 })).toEqual([want.twoDays])
    expect(await data({ interval: 'week', intervalCount: 1, dateRange: { date_from: '2024-05-26', date_to: '2024-06-12' } })).toEqual([want.rollingWeeks])
    expect(await data({ interval: 'month', intervalCount: 1, dateRange: { date_from: '2024-05-01', date_to: '2024-06-10' } })).toEqual([want.rollingMonths])
    expect(await data({ stickinessFilter: { stickinessCriteria: { operator: 'gte', value: 2 } } })).toEqual([want.atLeastTwo])
    expect(await data({ stickinessFilter: { stickinessCriteria: { operator: 'lte', value: 1 } } })).toEqual([want.atMostOne])
    const compared = await run({ series: [pageviews, { kind: 'EventsNode', event: '$identify' }], compareFilter: { compare: true } })
    expect(compared.map((r) => [r.compare_label, r.data])).toEqual([['current', want.days], ['previous', want.previousDays], ['current', want.identify], ['previous', [0, 0, 0, 0, 0]]])
    const fiveYears = await run({ dateRange: ALL_FIVE_YEARS }, { id: CHDB_TEAMS.fiveYears, timezone: 'UTC', weekStartDay: 0 })
    expect(fiveYears[0].data.slice(0, 3)).toEqual([1, 1, 0])
    expect(fiveYears[0].data).toHaveLength(FIVE_YEAR_DAYS)
    await close()
  }, 120_000)
})
