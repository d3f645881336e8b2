// The query API's compiled SQL on the current ClickHouse engine (chDB 26.7, in-process): the same service over a
// store filled through the event store and the person mapping sink.
import { expect, test } from 'bun:test'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { Params } from '../../src/query/dialect'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { event } from './event-store.contract'
import { FUNCTIONS_QUERY, FUNCTIONS_ROW } from './query-api.contract'

describeWithChdb('query API on chDB (ClickHouse 26.7)', () => {
  test('counts, properties as sent, time buckets, subqueries, person_id after a merge, the tenant', async () => {
    const url = chdbUrl(`query_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    const DAY = Date.UTC(2024, 4, 6)
    const props = (p: Record<string, unknown>) => JSON.stringify(p)
    await store.insertBatch(
      [
        event({ teamId: 1, event: '$pageview', distinctId: 'anon-a', timestamp: DAY + 3_600_000, properties: props({ $browser: 'Chrome', n: 1, flag: true, nested: { k: 'v1' } }) }),
        event({ teamId: 1, event: '$pageview', distinctId: 'anon-a', timestamp: DAY + 5_400_000, properties: props({ $browser: 'Chrome', n: 2.5, flag: false }) }),
        event({ teamId: 1, event: '$identify', distinctId: 'user-a', timestamp: DAY + 7_200_000, properties: props({ $browser: 'Chrome' }) }),
        event({ teamId: 1, event: '$pageview', distinctId: 'user-b', timestamp: DAY + 26 * 3_600_000, properties: props({ $browser: 'Safari', n: '7' }) }),
        event({ teamId: 2, event: '$pageview', distinctId: 'someone', timestamp: DAY + 3_600_000, properties: props({ $browser: 'Chrome' }) }),
      ],
      { inDoubt: false },
    )
    const sink = new ClickHouseMappingSink(chdbClient(), store.database)
    // anon-a had its own person first; the merge re-points it with a higher version
    await sink.write([
      { teamId: 1, distinctId: 'anon-a', personId: '00000000-0000-4000-8000-00000000000a', version: 1 },
      { teamId: 1, distinctId: 'user-b', personId: '00000000-0000-4000-8000-00000000000b', version: 2 },
      { teamId: 1, distinctId: 'user-a', personId: '00000000-0000-4000-8000-0000000000aa', version: 3 },
      { teamId: 1, distinctId: 'anon-a', personId: '00000000-0000-4000-8000-0000000000aa', version: 4 },
    ])
    const service = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const rows = async (text: string, team = 1) => (await service.run(team, text)).results
    expect(await rows('SELECT count() FROM events')).toEqual([[4]])
    expect(await rows('SELECT count() FROM events', 2)).toEqual([[1]])
    expect(await rows("SELECT count() FROM events WHERE event = 'x' OR 1 = 1")).toEqual([[4]])
    expect(await rows("SELECT properties.n, properties.flag, properties.nested.k, properties['$browser'], properties.missing FROM events WHERE distinct_id = 'anon-a' ORDER BY timestamp")).toEqual([
      [1, true, 'v1', 'Chrome', null],
      [2.5, false, null, 'Chrome', null],
    ])
    expect(await rows('SELECT count() FROM events WHERE properties.n > 2')).toEqual([[1]])
    expect(await rows(FUNCTIONS_QUERY)).toEqual([FUNCTIONS_ROW])
    // long chains are written as balanced trees: within max_parser_depth
    expect(await rows(`SELECT count() FROM events WHERE ${Array(3_000).fill("event = 'x'").join(' OR ')} OR event = '$identify'`)).toEqual([[1]])
    expect(await rows(`SELECT count() FROM events WHERE ${Array(3_000).fill('1 = 1').join(' AND ')} AND event = '$identify'`)).toEqual([[1]])
    expect(await rows('SELECT toStartOfDay(timestamp) AS d, count() FROM events GROUP BY d ORDER BY d')).toEqual([
      ['2024-05-06T00:00:00.000Z', 3],
      ['2024-05-07T00:00:00.000Z', 1],
    ])
    expect(await rows('SELECT toStartOfWeek(timestamp) AS w, toStartOfMonth(timestamp) AS m, count() FROM events GROUP BY w, m')).toEqual([['2024-05-05', '2024-05-01', 4]])
    expect(await rows('SELECT count() FROM (SELECT distinct_id FROM events GROUP BY distinct_id)')).toEqual([[3]])
    expect(await rows('SELECT count(DISTINCT person_id) FROM events')).toEqual([[2]])
    expect(await service.personIds(1, ['anon-a', 'nobody'])).toEqual(new Map([['anon-a', '00000000-0000-4000-8000-0000000000aa']]))
    // user-b's person is erased: a tombstone with a higher version
    await sink.write([{ teamId: 1, distinctId: 'user-b', personId: null, version: 5 }])
    expect(await rows('SELECT count(DISTINCT person_id), count(person_id) FROM events')).toEqual([[1, 3]])
    expect(await service.personIds(1, ['user-b'])).toEqual(new Map())
    const page = await service.run(1, 'SELECT event FROM events ORDER BY timestamp LIMIT 2 OFFSET 1')
    expect(page).toMatchObject({ results: [['$pageview'], ['$identify']], hasMore: true, limit: 2, offset: 1 })
    await store.close()
  })

  test('the budgets on a current engine: the same settings taken, the answer cut at its byte budget, memory refused in phog’s words', async () => {
    const url = chdbUrl(`query_budget_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    const blob = 'x'.repeat(200 * 1024)
    await store.insertBatch(
      Array.from({ length: 12 }, (_, i) => event({ teamId: 1, event: 'big', distinctId: `big-${String(i).padStart(2, '0')}`, timestamp: Date.UTC(2024, 4, 6) + i * 1000, properties: JSON.stringify({ blob }) })),
      { inDoubt: false },
    )
    const service = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 1024 * 1024 })
    const page = await service.run(1, 'SELECT distinct_id, properties FROM events ORDER BY timestamp')
    console.log(`chDB: a 1 MiB budget answered ${page.results.length} of 12 rows of 200 KB`)
    expect(page.hasMore).toBe(true)
    expect(page.results.map((r) => r[0])).toEqual(Array.from({ length: page.results.length }, (_, i) => `big-${String(i).padStart(2, '0')}`))
    expect(page.results.length).toBeLessThanOrEqual(5)
    expect(page.results.length).toBeGreaterThanOrEqual(3)
    const tooBig = await service.run(1, `SELECT concat(${Array(6).fill('properties.blob').join(', ')}) FROM events LIMIT 1`).catch((e) => e)
    expect(tooBig).toMatchObject({ status: 413, code: 'query_result_too_large' })
    // the result limits (max_result_rows = offset + limit + 1) apply to the answer, not to a subquery's rows
    const runner = new ClickHouseQueryRunner(url, { client: chdbClient() })
    const count = { sql: 'SELECT count() FROM (SELECT number FROM numbers(100000))', params: new Params('clickhouse-modern'), columns: ['n'], types: [], limit: 1, offset: 0 }
    expect((await runner.run(count, { teamId: 1, timeoutMs: 30_000 })).rows.map(([n]) => Number(n))).toEqual([100000])
    const tight = new ClickHouseQueryRunner(url, { client: chdbClient(), maxMemoryBytes: 1024 * 1024 })
    const error = await tight.run(
      { sql: 'SELECT count() FROM (SELECT number FROM numbers(3000000) GROUP BY number)', params: new Params('clickhouse-modern'), columns: ['n'], types: [], limit: 1, offset: 0 },
      { teamId: 1, timeoutMs: 30_000 },
    ).catch((e) => e)
    expect(error).toMatchObject({ kind: 'query' })
    expect(error.message).toMatch(/more memory than a query may use/)
    await store.close()
  })
})
