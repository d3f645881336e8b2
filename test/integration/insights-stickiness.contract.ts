// StickinessQuery through POST /api/projects/:id/query/ on every store (insights-stickiness.*.test.ts), over the
// lifecycle contract's New York events: persons per number of local days, weeks and months they were active,
// cumulative, `intervalCount` (groups counted back from date_to), `stickinessCriteria`, several series compared
// with the previous period, hours, PostHog's labels, refusals, and a range of five years answered in one statement.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { json, type Stack } from '../helpers/stack'
import { ALL_FIVE_YEARS, FIVE_YEAR_DAYS, FIVE_YEAR_EVENTS, LIFECYCLE_EVENTS, LIFECYCLE_PERSONS, MONTHS, NY_DAYS, seededProject, SUNDAY_WEEKS } from './insights-lifecycle.contract'

/**
 * Worked out by hand. `personless` is 1 when the store gives anon-e's events (sent with `$process_person_profile:
 * false`) a person id, as PostHog does (a person of their own: active on Jun 3 and Jun 4, local), else 0.
 * Local days Jun 3–7: alice 4 (her Jun 5 event has no person profile, but it is hers: stickiness counts it), bob 2
 * (his Jun 2 22:00 is before the range), the merged anon-d/user-d 3; carol and frank none.
 */
export function expected(personless: number) {
  const p = personless
  return {
    days: [0, 1 + p, 1, 1, 0],
    cumulative: [3 + p, 3 + p, 2, 1, 0],
    // weeks of May 26, Jun 2, Jun 9: bob in two, alice, carol, the merged person (and anon-e) in one
    weeks: [3 + p, 1, 0],
    // May and June: bob in both; alice, carol, the merged person, frank (Jun 20) (and anon-e) in June
    months: [4 + p, 1],
    // days in twos counted back from Jun 7: {6, 7}, {4, 5}, {3}: alice in 3, bob and the merged person in 2
    twoDays: [0, 2 + p, 1],
    // weeks counted back from Wednesday Jun 12 ({Jun 6–12}, {May 30–Jun 5}, {May 26–29}): alice (Jun 3–5, Jun 6),
    // bob (Jun 2–5, Jun 10) and the merged person (Jun 4–5, Jun 6) in two; carol (and anon-e) in one
    rollingWeeks: [1 + p, 3, 0],
    // months counted back from Jun 10 ({May 11–Jun 10}, …): bob's May 20 and June are one; frank's Jun 20 is after
    rollingMonths: [4 + p, 0],
    // days with 2 events or more: alice's Jun 4 only
    atLeastTwo: [1, 0, 0, 0, 0],
    // days with at most one event: alice 3 (not Jun 4), bob 2, the merged person 3 (and anon-e 2)
    atMostOne: [0, 1 + p, 2, 0, 0],
    // May 29–Jun 2: bob (Jun 2 22:00) and carol (Jun 2)
    previousDays: [2, 0, 0, 0, 0],
    // the $identify: the merged person on Jun 5
    identify: [1, 0, 0, 0, 0],
  }
}

type Result = { data: number[]; days: number[]; labels: string[]; count: number; label: string; action: Record<string, unknown>; compare?: boolean; compare_label?: string }

export function stickinessContract(name: string, start: () => Promise<Stack>): void {
  describe(`stickiness: ${name}`, () => {
    let stack: Stack
    let project: number
    let fiveYears: number
    let want: ReturnType<typeof expected>
    const post = (node: Record<string, unknown>, id = project) =>
      stack.api(`/api/projects/${id}/query/`, { method: 'POST', json: { query: node, refresh: 'force_blocking' } })
    const answer = async (node: Record<string, unknown>, id = project) => {
      const r = await post(node, id)
      const body = await json(r)
      if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`)
      return body
    }
    const pageviews = { kind: 'EventsNode', event: '$pageview' }
    const stickiness = (extra: Record<string, unknown>, id = project) => answer({ kind: 'StickinessQuery', series: [pageviews], dateRange: NY_DAYS, ...extra }, id)
    const data = async (extra: Record<string, unknown>) => (await stickiness(extra)).results.map((r: Result) => r.data)

    beforeAll(async () => {
      stack = await start()
      project = await seededProject(stack, 'Stickiness', 'phc_stickiness_new_york_001', 'America/New_York', LIFECYCLE_EVENTS, LIFECYCLE_PERSONS.length)
      fiveYears = await seededProject(stack, 'Five years', 'phc_stickiness_five_years_1', 'UTC', FIVE_YEAR_EVENTS, 2)
      const personless = await answer({ kind: 'HogQLQuery', query: "SELECT count(DISTINCT person_id) FROM events WHERE distinct_id = 'anon-e'" })
      want = expected(Number(personless.results[0][0]))
      console.log(`${name}: anon-e's personless events ${want.days[1] === 2 ? 'have a person id (counted)' : 'have no person id (not counted)'}`)
    }, 120_000)
    afterAll(() => stack?.close())

    test('local days: persons per number of days, PostHog’s days, labels, action and envelope', async () => {
      const body = await stickiness({ interval: 'day', stickinessFilter: { display: 'ActionsLineGraph', showLegend: true } })
      expect(body.results).toEqual([
        {
          action: { order: 0, type: 'events', name: '$pageview', id: '$pageview', custom_name: null },
          label: '$pageview',
          count: want.days.reduce((a, b) => a + b, 0),
          data: want.days,
          days: [1, 2, 3, 4, 5],
          labels: ['1 day', '2 days', '3 days', '4 days', '5 days'],
        },
      ])
      expect(body).toMatchObject({ timezone: 'America/New_York', is_cached: false, resolved_date_range: { date_from: '2024-06-03T00:00:00-04:00' } })
      expect(body.hogql).toContain('count(DISTINCT')
    })

    test('cumulative: persons active on at least n days', async () => {
      const body = await stickiness({ stickinessFilter: { computedAs: 'cumulative' } })
      expect(body.results[0]).toMatchObject({ data: want.cumulative, count: want.days.reduce((a, b) => a + b, 0) })
      expect(body.results[0].labels).toEqual(['1 day or more', '2 days or more', '3 days or more', '4 days or more', '5 days or more'])
    })

    test('weeks and months of the calendar; with intervalCount, groups counted back from date_to', async () => {
      expect(await data({ interval: 'week', dateRange: SUNDAY_WEEKS })).toEqual([want.weeks])
      expect((await stickiness({ interval: 'week', dateRange: SUNDAY_WEEKS })).results[0].labels).toEqual(['1 week', '2 weeks', '3 weeks'])
      expect(await data({ interval: 'month', dateRange: MONTHS })).toEqual([want.months])
      const twos = await stickiness({ intervalCount: 2 })
      expect(twos.results[0]).toMatchObject({ data: want.twoDays, days: [1, 2, 3], labels: ['1 day', '2 days', '3 days'] })
      expect(await data({ interval: 'week', intervalCount: 1, dateRange: { date_from: '2024-05-26', date_to: '2024-06-12' } })).toEqual([want.rollingWeeks])
      expect(await data({ interval: 'month', intervalCount: 1, dateRange: { date_from: '2024-05-01', date_to: '2024-06-10' } })).toEqual([want.rollingMonths])
    })

    test('stickinessCriteria: only intervals with enough (or few enough) events count', async () => {
      expect(await data({ stickinessFilter: { stickinessCriteria: { operator: 'gte', value: 2 } } })).toEqual([want.atLeastTwo])
      expect(await data({ stickinessFilter: { stickinessCriteria: { operator: 'exact', value: 2 } } })).toEqual([want.atLeastTwo])
      expect(await data({ stickinessFilter: { stickinessCriteria: { operator: 'lte', value: 1 } } })).toEqual([want.atMostOne])
    })

    test('several series compared with the previous period: current then previous, per series', async () => {
      const body = await stickiness({ series: [pageviews, { kind: 'EventsNode', event: '$identify', custom_name: 'Signed in' }], compareFilter: { compare: true } })
      expect(body.results.map((r: Result) => [r.label, r.compare_label, r.data, r.action.order])).toEqual([
        ['$pageview', 'current', want.days, 0],
        ['$pageview', 'previous', want.previousDays, 0],
        ['$identify', 'current', want.identify, 1],
        ['$identify', 'previous', [0, 0, 0, 0, 0], 1],
      ])
      expect(body.results[2].action).toEqual({ order: 1, type: 'events', name: '$identify', id: '$identify', custom_name: 'Signed in' })
      expect(body.results.every((r: Result) => r.compare === true)).toBe(true)
      const all = await stickiness({ series: [{ kind: 'EventsNode', event: null }] })
      expect(all.results[0]).toMatchObject({ label: 'All events', data: want.days, action: { id: null, name: 'All events' } })
      const none = await stickiness({ properties: [{ key: '$browser', value: 'Netscape' }] })
      expect(none.results[0]).toMatchObject({ data: [0, 0, 0, 0, 0], count: 0 })
    })

    test('hours in the project’s timezone', async () => {
      // Jun 4, 08:00–11:00 local: the merged person at 08:00, alice at 10:00 and 11:00
      const body = await stickiness({ interval: 'hour', dateRange: { date_from: '2024-06-04T08:00:00', date_to: '2024-06-04T11:00:00', explicitDate: true } })
      expect(body.results[0]).toMatchObject({ data: [1, 1, 0, 0], labels: ['1 hour', '2 hours', '3 hours', '4 hours'] })
    })

    test('five years of days: one statement, one row per count; hours over them are refused', async () => {
      const body = await stickiness({ dateRange: ALL_FIVE_YEARS }, fiveYears)
      const data = new Array<number>(FIVE_YEAR_DAYS).fill(0)
      // recent on one day, old on two
      data[0] = 1
      data[1] = 1
      expect(body.results[0].data).toEqual(data)
      expect(body.results[0].days).toHaveLength(FIVE_YEAR_DAYS)
      expect(String(body.hogql).match(/SELECT intervals/g)).toHaveLength(1)
      const hours = await post({ kind: 'StickinessQuery', series: [pageviews], dateRange: ALL_FIVE_YEARS, interval: 'hour' }, fiveYears)
      expect(hours.status).toBe(400)
      expect(await json(hours)).toMatchObject({ code: 'too_many_buckets', attr: 'interval' })
    })

    test('refusals name the member', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ intervalCount: 0 }, 'query__intervalCount'],
        [{ stickinessFilter: { stickinessCriteria: { operator: 'gt', value: 1 } } }, 'query__stickinessFilter'],
        [{ series: [] }, 'query__series'],
        [{ lifecycleFilter: {} }, 'query__lifecycleFilter'],
        [{ series: [{ ...pageviews, math: 'unique_group' }] }, 'query__series__0__math'],
      ]
      for (const [extra, attr] of cases) {
        const r = await post({ kind: 'StickinessQuery', series: [pageviews], ...extra })
        const body = await json(r)
        expect([JSON.stringify(extra), r.status, body.type, body.attr]).toEqual([JSON.stringify(extra), 400, 'validation_error', attr])
      }
    })
  })
}
