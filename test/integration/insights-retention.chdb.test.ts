// RetentionQuery and EventsQuery on the current ClickHouse engine (chDB, in-process): the insights service over a
// store filled through the event store and the person mapping sink, with the contract's events and tables.
import { expect, test } from 'bun:test'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { createInsightsService } from '../../src/insights/kinds'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { event } from './event-store.contract'
import { counts, EXPECTED, NY_EVENTS, UTC_EVENTS } from './insights-retention.contract'

describeWithChdb('retention and events queries on chDB', () => {
  test('the contract’s tables, local days in New York, EventsQuery rows', async () => {
    const url = chdbUrl(`retention_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    const seeded = [...UTC_EVENTS.map((e) => ({ ...e, teamId: 1 })), ...NY_EVENTS.map((e) => ({ ...e, teamId: 2 }))]
    await store.insertBatch(
      seeded.map((e) => event({ teamId: e.teamId, event: e.event, distinctId: e.properties.distinct_id, timestamp: Date.parse(e.timestamp), properties: JSON.stringify(e.properties) })),
      { inDoubt: false },
    )
    const ids = [...new Set(seeded.map((e) => `${e.teamId}:${e.properties.distinct_id}`))]
    await new ClickHouseMappingSink(chdbClient(), store.database).write(
      ids.map((key, i) => ({ teamId: Number(key.split(':')[0]), distinctId: key.split(':')[1], personId: `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`, version: i + 1 })),
    )
    const query = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const insights = createInsightsService(query, { cacheTtlMs: 0, cacheMaxBytes: 0 }, { funnels: { maxEvents: 1_000_000, timeoutMs: 30_000 } })
    const utc = { id: 1, timezone: 'UTC', weekStartDay: 0 }
    const retention = (retentionType: string, dateRange: Record<string, unknown>, project = utc, totalIntervals = 5) =>
      insights.run(project, { kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals, retentionType }, dateRange })
    const may = { date_from: '2024-05-06', date_to: '2024-05-10' }
    expect(counts((await retention('retention_recurring', may)) as never)).toEqual(EXPECTED.recurring)
    expect(counts((await retention('retention_first_time', may)) as never)).toEqual(EXPECTED.firstTime)
    const newYork = await retention('retention_recurring', { date_from: '2024-03-09', date_to: '2024-03-11' }, { id: 2, timezone: 'America/New_York', weekStartDay: 0 }, 3)
    expect(counts(newYork as never)).toEqual(EXPECTED.newYork)
    const rows = await insights.run(utc, { kind: 'EventsQuery', select: ['distinct_id', 'count() AS n'], where: ["properties.$browser = 'Chrome'"], after: 'all', orderBy: ['n DESC', 'distinct_id'] })
    expect(rows.results).toEqual([['u1', 3], ['u4', 1]])
    const empty = await insights.run(utc, { kind: 'EventsQuery', select: ['*'] })
    expect(empty.results).toEqual([])
  }, 120_000)
})
