// The query API on ClickHouse 18.16 (a real server started by the test helpers), and its runner's time limits.
import { describe, expect, test } from 'bun:test'
import { Params } from '../../src/query/dialect'
import { ClickHouseQueryRunner, QueryRunError } from '../../src/query/repository'
import { sharedClickHouse } from '../helpers/shared-servers'
import { startStack } from '../helpers/stack'
import { queryApiContract } from './query-api.contract'

queryApiContract('ClickHouse 18.16 (real Postgres)', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 }))

describe('ClickHouse query runner', () => {
  test('a statement past its time is stopped by the server (max_execution_time): query_timeout', async () => {
    const ch = await sharedClickHouse()
    const runner = new ClickHouseQueryRunner(`${ch.url}/default`)
    const heavy = { sql: 'SELECT sum(cityHash64(number)) FROM system.numbers', params: new Params('clickhouse-legacy'), columns: ['s'], types: [], limit: 1, offset: 0 }
    const started = Date.now()
    const error = await runner.run(heavy, { teamId: 1, timeoutMs: 1000 }).catch((e) => e)
    expect(error).toBeInstanceOf(QueryRunError)
    expect(error.kind).toBe('timeout')
    // stopped by the server, not left running: the next statement answers
    expect((await runner.run({ ...heavy, sql: 'SELECT 1' }, { teamId: 1, timeoutMs: 1000 })).rows).toEqual([[1]])
    expect(Date.now() - started).toBeGreaterThan(0)
  })

  test('a client that goes away aborts the request', async () => {
    const ch = await sharedClickHouse()
    const runner = new ClickHouseQueryRunner(`${ch.url}/default`)
    const gone = new AbortController()
    const running = runner.run({ sql: 'SELECT sum(cityHash64(number)) FROM system.numbers', params: new Params('clickhouse-legacy'), columns: ['s'], types: [], limit: 1, offset: 0 }, { teamId: 1, timeoutMs: 60_000, signal: gone.signal }).catch((e) => e)
    await Bun.sleep(200)
    gone.abort()
    const error = await running
    expect(error).toBeInstanceOf(QueryRunError)
    // the server no longer runs it (18.16 notices the closed connection when it next writes; wait for that)
    let still = 1
    for (let i = 0; i < 100 && still > 0; i++) {
      still = Number((await ch.query("SELECT count() FROM system.processes WHERE query LIKE '%cityHash64(number)) FROM system.numbers%' AND query NOT LIKE '%system.processes%'")).trim())
      if (still > 0) await Bun.sleep(100)
    }
    expect(still).toBe(0)
  })
})
