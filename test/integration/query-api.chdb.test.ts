// The query API's compiled SQL on the current ClickHouse engine (chDB 26.7, in-process): the same service over a
// store filled through the event store and the person mapping sink.
import { expect, test } from 'bun:test'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
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
    const service = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), 30_000)
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
})
