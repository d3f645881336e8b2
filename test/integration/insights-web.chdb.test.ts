// Web analytics on the current ClickHouse engine (chDB 26.7, in-process): the insights service over a store filled
// through the event store and the person mapping sink, with the same events and answers as the other stores.
import { test } from 'bun:test'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { createInsightsService } from '../../src/insights/kinds'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { event } from './event-store.contract'
import { WEB_CHECKS, WEB_EVENTS } from './insights-web.contract'

describeWithChdb('web analytics on chDB (ClickHouse 26.7)', () => {
  test('overview, pages, entry pages and browsers as on the other stores', async () => {
    const url = chdbUrl(`web_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    await store.insertBatch(
      WEB_EVENTS.map((e) => {
        const { distinct_id, ...properties } = e.properties
        return event({ teamId: 1, event: e.event, distinctId: String(distinct_id), timestamp: Date.parse(e.timestamp), properties: JSON.stringify(properties) })
      }),
      { inDoubt: false },
    )
    const ids = ['u1', 'v2', 'v3', 'v4']
    await new ClickHouseMappingSink(chdbClient(), store.database).write(ids.map((distinctId, i) => ({ teamId: 1, distinctId, personId: `00000000-0000-4000-8000-00000000000${i + 1}`, version: i + 1 })))
    const query = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const insights = createInsightsService(query, { cacheTtlMs: 0, cacheMaxBytes: 0 }, { funnels: { maxEvents: 1_000_000, timeoutMs: 30_000 } })
    const project = { id: 1, timezone: 'UTC', weekStartDay: 0 }
    for (const check of Object.values(WEB_CHECKS)) await check((node) => insights.run(project, node))
    await store.close()
  }, 120_000)
})
