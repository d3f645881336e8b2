// Person, cohort and group breakdowns and group aggregation on the current ClickHouse engine (chDB, in-process): the
// contract's events through the event store and the person mapping sink, the contract's answers. Persons, groups and
// cohorts live in Postgres, which this test has none of: they are the contract's, handed over by a stand-in.
import { expect, test } from 'bun:test'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { funnelsRunner } from '../../src/insights/funnels'
import type { PropertyFilter } from '../../src/insights/model'
import type { PersonSets } from '../../src/insights/person-sets'
import { retentionRunner } from '../../src/insights/retention'
import { InsightsService } from '../../src/insights/service'
import { runTrends } from '../../src/insights/trends'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { event } from './event-store.contract'
import { byValue, EXPECTED, FUNNEL, GROUP_EVENTS, RETENTION, retentionByValue, retentionCounts, SIGNUPS, stepCounts, trendValues } from './insights-groups.contract'

const person = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
const PERSONS: Record<string, { id: string; properties: Record<string, string> }> = {
  ann: { id: person(1), properties: { plan: 'pro' } },
  bob: { id: person(2), properties: { plan: 'free' } },
  cat: { id: person(3), properties: { plan: 'pro' } },
  dan: { id: person(4), properties: {} },
}
const ORGANIZATIONS: Record<string, Record<string, string>> = { acme: { industry: 'tech' }, globex: { industry: 'retail' } }
const PRO_COHORT = 7

/** What Postgres would answer for the contract's persons, groups and its one cohort (plan = pro). */
const standIn = {
  async propertyOf(_team: number, uuids: readonly string[], key: string) {
    const byId = new Map(Object.values(PERSONS).map((p) => [p.id, p.properties]))
    return new Map(uuids.map((u) => [u, byId.get(u)?.[key] ?? null]))
  },
  async groupTypeName(_team: number, index: number) {
    return index === 0 ? 'organization' : null
  },
  async groupPropertyOf(_team: number, index: number, keys: readonly string[], key: string) {
    return new Map(keys.map((k) => [k, index === 0 ? (ORGANIZATIONS[k]?.[key] ?? null) : null]))
  },
  async resolve(_team: number, filters: readonly { filter: PropertyFilter }[]) {
    return new Map(filters.map(({ filter }) => [filter, filter.type === 'cohort' && Number(filter.value) === PRO_COHORT ? [PERSONS.ann.id, PERSONS.cat.id] : []]))
  },
} as unknown as PersonSets

describeWithChdb('person, cohort and group breakdowns, group aggregation on chDB (ClickHouse 26.7)', () => {
  test('the contract’s answers', async () => {
    const url = chdbUrl(`groups_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    await store.insertBatch(
      GROUP_EVENTS.map((e) => {
        const { distinct_id, ...properties } = e.properties
        return event({ teamId: 1, event: e.event, distinctId: String(distinct_id), timestamp: Date.parse(e.timestamp), properties: JSON.stringify(properties) })
      }),
      { inDoubt: false },
    )
    await new ClickHouseMappingSink(chdbClient(), store.database).write(Object.entries(PERSONS).map(([distinctId, p], i) => ({ teamId: 1, distinctId, personId: p.id, version: i + 1 })))
    const query = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const insights = new InsightsService(query, { cacheTtlMs: 0, cacheMaxBytes: 0 }, standIn)
      .register('TrendsQuery', runTrends)
      .register('FunnelsQuery', funnelsRunner({ maxEvents: 100_000, timeoutMs: 30_000 }))
      .register('RetentionQuery', retentionRunner())
    const project = { id: 1, timezone: 'UTC', weekStartDay: 0 }
    const answer = async (node: Record<string, unknown>) => (await insights.run(project, node)).results as any

    expect(stepCounts(await answer(FUNNEL))).toEqual(EXPECTED.funnel)
    expect(byValue(await answer({ ...FUNNEL, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } }))).toEqual(EXPECTED.funnelByPlan)
    expect(byValue(await answer({ ...FUNNEL, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person', breakdown_limit: 1 } }))).toEqual(EXPECTED.funnelByPlanLimited)
    expect(byValue(await answer({ ...FUNNEL, breakdownFilter: { breakdown: [PRO_COHORT, 'all'], breakdown_type: 'cohort' } }))).toEqual([[PRO_COHORT, [2, 2]], ['all', [4, 3]]])
    expect(trendValues(await answer({ ...SIGNUPS, breakdownFilter: { breakdown: [PRO_COHORT, 'all'], breakdown_type: 'cohort' } }))).toEqual([[PRO_COHORT, [2, 1, 1]], ['all', [4, 1, 1]]])

    expect(retentionCounts(await answer(RETENTION))).toEqual(EXPECTED.retention)
    expect(retentionByValue(await answer({ ...RETENTION, breakdownFilter: { breakdown: '$browser' } }))).toEqual(EXPECTED.retentionByBrowser)
    expect(retentionByValue(await answer({ ...RETENTION, breakdownFilter: { breakdown: 'plan', breakdown_type: 'person' } }))).toEqual(EXPECTED.retentionByPlan)

    const uniqueOrganizations = { ...SIGNUPS, series: [{ kind: 'EventsNode', event: 'signup', math: 'unique_group', math_group_type_index: 0 }] }
    const industry = { breakdown: 'industry', breakdown_type: 'group', breakdown_group_type_index: 0 }
    expect((await answer(uniqueOrganizations))[0].data).toEqual(EXPECTED.uniqueOrganizations)
    expect(stepCounts(await answer({ ...FUNNEL, aggregation_group_type_index: 0 }))).toEqual(EXPECTED.funnelOfOrganizations)
    expect(byValue(await answer({ ...FUNNEL, aggregation_group_type_index: 0, breakdownFilter: industry }))).toEqual(EXPECTED.funnelOfOrganizationsByIndustry)
    expect(retentionCounts(await answer({ ...RETENTION, aggregation_group_type_index: 0 }))).toEqual(EXPECTED.retentionOfOrganizations)
    expect(byValue(await answer({ ...FUNNEL, breakdownFilter: industry }))).toEqual(EXPECTED.funnelByIndustry)
    expect(retentionByValue(await answer({ ...RETENTION, breakdownFilter: industry }))).toEqual(EXPECTED.retentionByIndustry)
    expect(trendValues(await answer({ ...SIGNUPS, breakdownFilter: industry }))).toEqual(EXPECTED.signupsByIndustry)
    expect(trendValues(await answer({ ...uniqueOrganizations, breakdownFilter: industry }))).toEqual(EXPECTED.organizationsByIndustry)
    await store.close()
  }, 120_000)
})
