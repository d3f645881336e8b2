// Person, cohort and group breakdowns and group aggregation through POST /api/projects/:id/query/ on every store
// (insights-groups.*.test.ts): a funnel by a person property and by cohorts, retention by an event property and by a
// person property, unique organizations per day, a funnel and retention counting organizations, trends by a group
// property and by cohorts; every answer worked out by hand below; refusals by name for what stays unsupported.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { retentionRunner } from '../../src/insights/retention'
import { InsightsService } from '../../src/insights/service'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

const ev = (event: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event, timestamp, properties: { distinct_id: distinctId, ...properties },
})
const acme = { $groups: { organization: 'acme' } }
const globex = { $groups: { organization: 'globex' } }

// UTC days 0-2 are 3-5 June 2024. ann (pro) and bob (free) work at acme (tech), cat (pro) at globex (retail), dan
// has neither a plan nor an organization. The organizations are identified before the range.
export const GROUP_EVENTS = [
  ev('$groupidentify', 'ann', '2024-06-01T09:00:00Z', { $group_type: 'organization', $group_key: 'acme', $group_set: { industry: 'tech' } }),
  ev('$groupidentify', 'ann', '2024-06-01T09:01:00Z', { $group_type: 'organization', $group_key: 'globex', $group_set: { industry: 'retail' } }),
  ev('signup', 'ann', '2024-06-03T10:00:00Z', { $browser: 'Chrome', ...acme, $set: { plan: 'pro' } }),
  ev('pay', 'ann', '2024-06-03T11:00:00Z', { ...acme }),
  ev('signup', 'bob', '2024-06-03T10:00:00Z', { $browser: 'Safari', ...acme, $set: { plan: 'free' } }),
  ev('signup', 'cat', '2024-06-03T12:00:00Z', { $browser: 'Chrome', ...globex, $set: { plan: 'pro' } }),
  ev('signup', 'dan', '2024-06-03T13:00:00Z', { $browser: 'Firefox' }),
  ev('pay', 'bob', '2024-06-04T09:00:00Z', { ...acme }),
  ev('signup', 'cat', '2024-06-04T09:00:00Z', { $browser: 'Safari', ...globex }),
  ev('signup', 'ann', '2024-06-05T08:00:00Z', { $browser: 'Firefox', ...acme }),
  ev('pay', 'cat', '2024-06-05T10:00:00Z', { ...globex }),
]
export const RANGE = { date_from: '2024-06-03', date_to: '2024-06-05' }
const NULL = '$$_posthog_breakdown_null_$$'

export const FUNNEL = { kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: 'signup' }, { kind: 'EventsNode', event: 'pay' }], dateRange: RANGE }
export const RETENTION = {
  kind: 'RetentionQuery',
  retentionFilter: { period: 'Day', totalIntervals: 3, retentionType: 'retention_recurring', targetEntity: { id: 'signup', type: 'events' }, returningEntity: { id: 'pay', type: 'events' } },
  dateRange: RANGE,
}
export const SIGNUPS = { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'signup' }], dateRange: RANGE }

/** Each answer, worked out by hand from GROUP_EVENTS. */
export const EXPECTED: Record<string, unknown[]> = {
  // everyone signs up on day 0; dan never pays
  funnel: [4, 3],
  // ann and cat pro, bob free, dan none: ranked by persons entering, ties by value (the null sentinel sorts first)
  funnelByPlan: [['pro', [2, 2]], [NULL, [1, 0]], ['free', [1, 1]]],
  // past breakdown_limit 1: bob and dan together
  funnelByPlanLimited: [['pro', [2, 2]], ['Other', [2, 1]]],
  // organizations: acme (ann, bob) and globex (cat) both sign up and pay; dan has none and is not counted
  funnelOfOrganizations: [2, 2],
  funnelOfOrganizationsByIndustry: [['retail', [1, 1]], ['tech', [1, 1]]],
  // cohorts, recurring; targets/returns per person (day indexes): ann {0,2}/{0}, bob {0}/{1}, cat {0,1}/{2}, dan {0}/{}
  retention: [[4, 1, 1], [1, 1, 0], [1, 0, 0]],
  // the browser of each cohort day's first signup: ann Chrome (day 0) and Firefox (day 2), bob Safari, cat Chrome
  // (day 0) and Safari (day 1), dan Firefox; two cohort members each, ties by value
  retentionByBrowser: [
    ['Chrome', [[2, 0, 1], [0, 0, 0], [0, 0, 0]]],
    ['Firefox', [[1, 0, 0], [0, 0, 0], [1, 0, 0]]],
    ['Safari', [[1, 1, 0], [1, 1, 0], [0, 0, 0]]],
  ],
  retentionByPlan: [
    ['pro', [[2, 0, 1], [1, 1, 0], [1, 0, 0]]],
    [NULL, [[1, 0, 0], [0, 0, 0], [0, 0, 0]]],
    ['free', [[1, 1, 0], [0, 0, 0], [0, 0, 0]]],
  ],
  // acme: signups days 0, 2, pays 0, 1; globex: signups 0, 1, pay 2
  retentionOfOrganizations: [[2, 1, 1], [1, 1, 0], [1, 0, 0]],
  uniqueOrganizations: [2, 1, 1],
  // persons by the industry of the organization on their counted attempt's first event: ann's day-0 signup (acme), bob
  // (acme), cat's day-1 signup (globex: the one her pay carries), dan none
  funnelByIndustry: [['tech', [2, 2]], [NULL, [1, 0]], ['retail', [1, 1]]],
  // persons' cohorts by the industry of the organization on the period's first signup
  retentionByIndustry: [
    ['tech', [[2, 1, 0], [0, 0, 0], [1, 0, 0]]],
    ['retail', [[1, 0, 1], [1, 1, 0], [0, 0, 0]]],
    [NULL, [[1, 0, 0], [0, 0, 0], [0, 0, 0]]],
  ],
  signupsByIndustry: [['tech', [2, 0, 1]], ['retail', [1, 1, 0]], [NULL, [1, 0, 0]]],
  organizationsByIndustry: [['retail', [1, 1, 0]], ['tech', [1, 0, 1]]],
}

type Step = { count: number; breakdown_value?: unknown }
export const stepCounts = (results: Step[]): unknown[] => results.map((s) => s.count)
export const byValue = (results: Step[][]): unknown[] => results.map((steps) => [steps[0].breakdown_value, stepCounts(steps)])
type Row = { values: { count: number }[]; breakdown_value?: unknown }
export const retentionCounts = (results: Row[]): unknown[] => results.map((r) => r.values.map((v) => v.count))
/** Rows by breakdown value, in the answer's order. */
export function retentionByValue(results: Row[]): unknown[] {
  const out: [unknown, number[][]][] = []
  for (const row of results) {
    const last = out[out.length - 1]
    const counts = row.values.map((v) => v.count)
    if (last && last[0] === row.breakdown_value) last[1].push(counts)
    else out.push([row.breakdown_value, [counts]])
  }
  return out
}
export const trendValues = (results: { breakdown_value?: unknown; data: number[] }[]): unknown[] => results.map((r) => [r.breakdown_value, r.data])

export function insightsGroupsContract(name: string, start: () => Promise<Stack>): void {
  describe(`person, cohort and group breakdowns, group aggregation: ${name}`, () => {
    let stack: Stack
    let pro: number
    const post = (query: Record<string, unknown>) => stack.api('/api/projects/1/query/', { method: 'POST', json: { query, refresh: 'force_blocking' } })
    const answer = async (query: Record<string, unknown>) => {
      const r = await post(query)
      const body = await json(r)
      if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`)
      return body
    }

    beforeAll(async () => {
      stack = await start()
      const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: GROUP_EVENTS }) }))
      expect(r.status).toBe(200)
      await learned(stack)
      for (let i = 0; i < 200; i++) {
        const body = await json(post({ kind: 'HogQLQuery', query: 'SELECT count(), count(DISTINCT person_id) FROM events' }))
        if (body.results?.[0]?.[0] === GROUP_EVENTS.length && body.results?.[0]?.[1] === 4) break
        await Bun.sleep(100)
      }
      const created = await stack.api('/api/projects/1/cohorts/', {
        method: 'POST',
        json: { name: 'Pro', filters: { properties: { type: 'OR', values: [{ type: 'AND', values: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }] }] } } },
      })
      if (created.status !== 201) throw new Error(JSON.stringify(await json(created)))
      pro = (await json(created)).id
    }, 120_000)
    afterAll(() => stack?.close())

    test('a funnel by a person property: each person\'s value now, first touch, limit and "Other"', async () => {
      expect(stepCounts((await answer(FUNNEL)).results)).toEqual(EXPECTED.funnel)
      const byPlan = await answer({ ...FUNNEL, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } })
      expect(byValue(byPlan.results)).toEqual(EXPECTED.funnelByPlan)
      expect(byPlan.results[0][1]).toMatchObject({ breakdown: 'pro', breakdown_value: 'pro', order: 1, name: 'pay' })
      expect(byValue((await answer({ ...FUNNEL, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person', breakdown_limit: 1 } })).results)).toEqual(EXPECTED.funnelByPlanLimited)
      // the trends view by the same values: per day of the attempts' first step; cat's day-0 signup is not the one her
      // pay carries (the latest signup before it is day 1's), ann's day-2 signup is never paid for
      const trends = await answer({ ...FUNNEL, funnelsFilter: { funnelVizType: 'trends' }, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } })
      expect(trendValues(trends.results)).toEqual([['pro', [50, 100, 0]], [NULL, [0, 0, 0]], ['free', [100, 0, 0]]])
    })

    test('a funnel and a trend by cohorts: each cohort\'s persons, its id as the value', async () => {
      const funnel = await answer({ ...FUNNEL, breakdownFilter: { breakdown: [pro, 'all'], breakdown_type: 'cohort' } })
      expect(byValue(funnel.results)).toEqual([[pro, [2, 2]], ['all', [4, 3]]])
      const trend = await answer({ ...SIGNUPS, breakdownFilter: { breakdown: [pro, 'all'], breakdown_type: 'cohort' } })
      expect(trendValues(trend.results)).toEqual([[pro, [2, 1, 1]], ['all', [4, 1, 1]]])
    })

    test('retention by an event property of the first target event, and by a person property', async () => {
      expect(retentionCounts((await answer(RETENTION)).results)).toEqual(EXPECTED.retention)
      const browser = await answer({ ...RETENTION, breakdownFilter: { breakdown: '$browser' } })
      expect(retentionByValue(browser.results)).toEqual(EXPECTED.retentionByBrowser)
      expect(browser.results[0]).toMatchObject({ label: 'Day 0', date: '2024-06-03T00:00:00Z', breakdown_value: 'Chrome' })
      expect(retentionByValue((await answer({ ...RETENTION, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } })).results)).toEqual(EXPECTED.retentionByPlan)
      // past breakdown_limit: the rest summed as "other"
      const limited = retentionByValue((await answer({ ...RETENTION, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person', breakdown_limit: 1 } })).results)
      expect(limited).toEqual([EXPECTED.retentionByPlan[0], ['$$_posthog_breakdown_other_$$', [[2, 1, 0], [0, 0, 0], [0, 0, 0]]]])
      // the tables being counted are bounded: three values of 3 × 3 numbers past a cap of 18, refused by name
      const capped = new InsightsService(stack.services.query, { cacheTtlMs: 0, cacheMaxBytes: 0 }).register('RetentionQuery', retentionRunner({ pageRows: 50_000, maxRows: 1_000_000, maxCells: 18 }))
      const project = { id: 1, timezone: 'UTC', weekStartDay: 0 }
      expect(retentionCounts((await capped.run(project, RETENTION)).results as never)).toEqual(EXPECTED.retention)
      const error = await capped.run(project, { ...RETENTION, breakdownFilter: { breakdown: '$browser' } }).catch((e) => e)
      expect(error).toMatchObject({ status: 400, code: 'too_many_results', attr: 'query__breakdownFilter__breakdown' })
      // pages of 4 rows (whole persons of at most 3 periods): the values of each page's persons read one person a statement
      const paged = new InsightsService(stack.services.query, { cacheTtlMs: 0, cacheMaxBytes: 0 }).register('RetentionQuery', retentionRunner({ pageRows: 4, maxRows: 1_000 }))
      const pagedAnswer = await paged.run(project, { ...RETENTION, breakdownFilter: { breakdown: '$browser' } })
      expect(retentionByValue(pagedAnswer.results as never)).toEqual(EXPECTED.retentionByBrowser)
      expect(String(pagedAnswer.hogql).split('AS value, min(timestamp)').length - 1).toBeGreaterThanOrEqual(4)
    })

    test('groups: unique organizations per day, a funnel and retention counting organizations, trends by a group property', async () => {
      const unique = await answer({ ...SIGNUPS, series: [{ kind: 'EventsNode', event: 'signup', math: 'unique_group', math_group_type_index: 0 }] })
      expect(unique.results[0].data).toEqual(EXPECTED.uniqueOrganizations)
      expect(stepCounts((await answer({ ...FUNNEL, aggregation_group_type_index: 0 })).results)).toEqual(EXPECTED.funnelOfOrganizations)
      const industry = { breakdown: 'industry', breakdown_type: 'group', breakdown_group_type_index: 0 }
      expect(byValue((await answer({ ...FUNNEL, aggregation_group_type_index: 0, breakdownFilter: industry })).results)).toEqual(EXPECTED.funnelOfOrganizationsByIndustry)
      expect(retentionCounts((await answer({ ...RETENTION, aggregation_group_type_index: 0 })).results)).toEqual(EXPECTED.retentionOfOrganizations)
      expect(byValue((await answer({ ...FUNNEL, breakdownFilter: industry })).results)).toEqual(EXPECTED.funnelByIndustry)
      expect(retentionByValue((await answer({ ...RETENTION, breakdownFilter: industry })).results)).toEqual(EXPECTED.retentionByIndustry)
      expect(trendValues((await answer({ ...SIGNUPS, breakdownFilter: industry })).results)).toEqual(EXPECTED.signupsByIndustry)
      const organizations = await answer({ ...SIGNUPS, series: [{ kind: 'EventsNode', event: 'signup', math: 'unique_group', math_group_type_index: 0 }], breakdownFilter: industry })
      expect(trendValues(organizations.results)).toEqual(EXPECTED.organizationsByIndustry)
    })

    test('refusals name what stays unsupported', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ ...RETENTION, breakdownFilter: { breakdown: [pro], breakdown_type: 'cohort' } }, 'query__breakdownFilter__breakdown_type'],
        [{ ...FUNNEL, aggregation_group_type_index: 0, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } }, 'query__breakdownFilter__breakdown_type'],
        [{ ...RETENTION, aggregation_group_type_index: 0, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } }, 'query__breakdownFilter__breakdown_type'],
        [{ ...FUNNEL, breakdownFilter: { breakdown: [pro], breakdown_type: 'event' } }, 'query__breakdownFilter__breakdown'],
        [{ ...SIGNUPS, series: [{ kind: 'EventsNode', event: 'signup', math: 'unique_group' }] }, 'query__series__0__math_group_type_index'],
        [{ ...SIGNUPS, series: [{ kind: 'EventsNode', event: 'signup', math: 'unique_group', math_group_type_index: 3 }] }, 'query__series__0__math_group_type_index'],
        [{ ...SIGNUPS, series: [{ kind: 'EventsNode', event: 'signup', math: 'unique_group', math_group_type_index: 0 }], breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } }, 'query__series__0__math'],
        [{ ...SIGNUPS, series: [{ kind: 'EventsNode', event: 'signup', math: 'dau' }], breakdownFilter: { breakdown: 'industry', breakdown_type: 'group', breakdown_group_type_index: 0 } }, 'query__series__0__math'],
        [{ ...SIGNUPS, breakdownFilter: { breakdown: 'industry', breakdown_type: 'group' } }, 'query__breakdownFilter__breakdown_group_type_index'],
        [{ ...FUNNEL, aggregation_group_type_index: 4 }, 'query__aggregation_group_type_index'],
        [{ ...SIGNUPS, aggregation_group_type_index: 0 }, 'query__aggregation_group_type_index'],
      ]
      for (const [node, attr] of cases) {
        const r = await post(node)
        const body = await json(r)
        expect([JSON.stringify(node).slice(0, 200), r.status, body.attr]).toEqual([JSON.stringify(node).slice(0, 200), 400, attr])
      }
    })
  })
}
