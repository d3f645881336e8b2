// TrendsQuery on the current ClickHouse engine (chDB 26.7, in-process): the insights service over a store filled
// through the event store and the person mapping sink, with the same events and answers as the other stores.
import { expect, test } from 'bun:test'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { createInsightsService } from '../../src/insights/kinds'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { event } from './event-store.contract'
import { TREND_EVENTS } from './insights-trends.contract'

describeWithChdb('trends on chDB (ClickHouse 26.7)', () => {
  test('local days, weeks, math, breakdowns, filters and formulas as on the other stores', async () => {
    const url = chdbUrl(`trends_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    await store.insertBatch(
      TREND_EVENTS.map((e) => {
        const { distinct_id, ...properties } = e.properties
        return event({ teamId: 1, event: e.event, distinctId: String(distinct_id), timestamp: Date.parse(e.timestamp), properties: JSON.stringify(properties) })
      }),
      { inDoubt: false },
    )
    const person = (n: number) => `00000000-0000-4000-8000-00000000000${n}`
    await new ClickHouseMappingSink(chdbClient(), store.database).write([
      { teamId: 1, distinctId: 'anon-a', personId: person(1), version: 1 },
      { teamId: 1, distinctId: 'user-b', personId: person(2), version: 2 },
      { teamId: 1, distinctId: 'anon-c', personId: person(3), version: 3 },
      { teamId: 1, distinctId: 'user-a', personId: person(1), version: 4 },
    ])
    const insights = createInsightsService(new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 }), { cacheTtlMs: 0, cacheMaxBytes: 0 }, { funnels: { maxEvents: 1_000_000, timeoutMs: 30_000 } })
    const project = { id: 1, timezone: 'America/New_York', weekStartDay: 0 }
    const pageviews = { kind: 'EventsNode', event: '$pageview' }
    const trends = async (extra: Record<string, unknown>, p = project) =>
      (await insights.run(p, { kind: 'TrendsQuery', series: [pageviews], dateRange: { date_from: '2024-03-08', date_to: '2024-03-11' }, ...extra })).results as { data: number[]; breakdown_value?: string; aggregated_value?: number }[]
    expect((await trends({}))[0].data).toEqual([1, 1, 2, 2])
    expect((await trends({}, { ...project, timezone: 'UTC' }))[0].data).toEqual([0, 2, 2, 2])
    expect((await trends({ series: [{ ...pageviews, math: 'dau' }] }))[0].data).toEqual([1, 1, 1, 2])
    expect((await trends({ series: [{ ...pageviews, math: 'sum', math_property: 'n' }] }))[0].data).toEqual([0, 2, 8, 0])
    expect((await trends({ interval: 'week', dateRange: { date_from: '2024-03-04', date_to: '2024-03-17' } }, { ...project, weekStartDay: 1 }))[0].data).toEqual([4, 2])
    expect((await trends({ breakdownFilter: { breakdown: '$browser', breakdown_limit: 2 } })).map((r) => [r.breakdown_value, r.data])).toEqual([
      ['Chrome', [1, 1, 0, 1]],
      ['$$_posthog_breakdown_null_$$', [0, 0, 0, 1]],
      ['$$_posthog_breakdown_other_$$', [0, 0, 2, 0]],
    ])
    expect((await trends({ properties: [{ key: '$browser', value: 'Chrome', operator: 'is_not' }] }))[0].data).toEqual([0, 0, 2, 1])
    expect((await trends({ series: [pageviews, { kind: 'EventsNode', event: 'signup' }], trendsFilter: { formula: 'A + B * 10' } }))[0].data).toEqual([1, 1, 12, 2])
    expect((await trends({ series: [{ ...pageviews, math: 'dau' }], trendsFilter: { display: 'BoldNumber' } }))[0].aggregated_value).toBe(3)
    await store.close()
  }, 120_000)
})
