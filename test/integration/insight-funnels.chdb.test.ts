// FunnelsQuery's HogQL on the current ClickHouse engine (chDB, in-process): the insights service over a store filled
// through the event store and the person mapping sink; counts per order type, an exclusion, conversion times, and
// one person's events read over several answers of at most 64 KiB.
import { expect, test } from 'bun:test'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { funnelsRunner } from '../../src/insights/funnels'
import { InsightsService } from '../../src/insights/service'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { event } from './event-store.contract'

describeWithChdb('funnels on chDB (ClickHouse 26.7)', () => {
  test('ordered, strict, unordered, an exclusion, times, and paging through one heavy person', async () => {
    const url = chdbUrl(`funnels_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    const DAY = Date.UTC(2024, 4, 6)
    const min = (m: number) => DAY + m * 60_000
    const e = (name: string, distinctId: string, at: number) => event({ teamId: 1, event: name, distinctId, timestamp: at, properties: '{}' })
    const HEAVY = 2000
    await store.insertBatch(
      [
        // anon-a signs up, is merged into user-a, who views and buys; user-b views in between other events; user-c cancels
        e('signup', 'anon-a', min(0)), e('view', 'user-a', min(10)), e('purchase', 'user-a', min(30)),
        e('signup', 'user-b', min(0)), e('other', 'user-b', min(5)), e('view', 'user-b', min(20)),
        e('signup', 'user-c', min(0)), e('cancel', 'user-c', min(1)), e('view', 'user-c', min(2)), e('purchase', 'user-c', min(3)),
        // 2,000 signups of one person: several answers of 64 KiB, then the view and the purchase
        ...Array.from({ length: HEAVY }, (_, i) => e('signup', 'heavy', DAY - (HEAVY - i) * 1000)),
        e('view', 'heavy', min(40)), e('purchase', 'heavy', min(50)),
      ],
      { inDoubt: false },
    )
    const person = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`
    await new ClickHouseMappingSink(chdbClient(), store.database).write([
      { teamId: 1, distinctId: 'anon-a', personId: person(1), version: 1 },
      { teamId: 1, distinctId: 'user-a', personId: person(1), version: 2 },
      { teamId: 1, distinctId: 'user-b', personId: person(2), version: 3 },
      { teamId: 1, distinctId: 'user-c', personId: person(3), version: 4 },
      { teamId: 1, distinctId: 'heavy', personId: person(4), version: 5 },
    ])
    const query = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 })
    const insights = new InsightsService(query, { cacheTtlMs: 0, cacheMaxBytes: 0 }).register('FunnelsQuery', funnelsRunner({ maxEvents: 10_000, timeoutMs: 30_000 }))
    const project = { id: 1, timezone: 'UTC', weekStartDay: 0 }
    const series = ['signup', 'view', 'purchase'].map((event) => ({ kind: 'EventsNode', event }))
    const run = (funnelsFilter: Record<string, unknown> = {}) =>
      insights.run(project, { kind: 'FunnelsQuery', series, dateRange: { date_from: '2024-05-01', date_to: '2024-05-10' }, funnelsFilter }) as Promise<{ results: any; hogql: string }>
    const counts = async (funnelsFilter: Record<string, unknown> = {}) => ((await run(funnelsFilter)).results as { count: number }[]).map((s) => s.count)

    const started = performance.now()
    const ordered = await run()
    console.log(`chDB: ${HEAVY + 10} events in ${ordered.hogql.split(';\n\n').length} answers, ${(performance.now() - started).toFixed(0)} ms`)
    expect(ordered.hogql.split(';\n\n').length).toBeGreaterThan(2)
    expect(ordered.results.map((s: { count: number }) => s.count)).toEqual([4, 4, 3])
    // signup → view: a 10 min, b 20 min, c 2 min, heavy 40 min and 1 s after its last signup
    expect(ordered.results[1]).toMatchObject({ average_conversion_time: (600 + 1200 + 120 + 2401) / 4, median_conversion_time: 900 })
    expect(await counts({ funnelOrderType: 'strict' })).toEqual([4, 2, 2])
    expect(await counts({ funnelOrderType: 'unordered' })).toEqual([4, 4, 3])
    expect(await counts({ exclusions: [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 1 }] })).toEqual([3, 3, 2])
    expect(await counts({ funnelWindowInterval: 15, funnelWindowIntervalUnit: 'minute' })).toEqual([4, 2, 1])

    // the pages of one funnel share QUERY_TIMEOUT_MS: past it, 504 before the next page, not an answer from part of the events
    const hurried = new InsightsService(query, { cacheTtlMs: 0, cacheMaxBytes: 0 }).register('FunnelsQuery', funnelsRunner({ maxEvents: 10_000, timeoutMs: 0 }))
    const error = await hurried.run(project, { kind: 'FunnelsQuery', series, dateRange: { date_from: '2024-05-01', date_to: '2024-05-10' } }).catch((e) => e)
    expect(error).toMatchObject({ status: 504, code: 'query_timeout' })
    // and a cap below the events read: 400 too_many_events
    const capped = new InsightsService(query, { cacheTtlMs: 0, cacheMaxBytes: 0 }).register('FunnelsQuery', funnelsRunner({ maxEvents: 1000, timeoutMs: 30_000 }))
    expect(await capped.run(project, { kind: 'FunnelsQuery', series, dateRange: { date_from: '2024-05-01', date_to: '2024-05-10' } }).catch((e) => e)).toMatchObject({ status: 400, code: 'too_many_events' })
  }, 120_000)
})
