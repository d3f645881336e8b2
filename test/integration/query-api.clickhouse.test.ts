// The query API on ClickHouse 18.16 (a real server started by the test helpers), and its runner's time limits.
import { describe, expect, test } from 'bun:test'
import { Params } from '../../src/query/dialect'
import { ClickHouseQueryRunner, QueryRunError } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { freePort } from '../helpers/spawn-service'
import { sharedClickHouse } from '../helpers/shared-servers'
import { startStack } from '../helpers/stack'
import { queryApiContract } from './query-api.contract'

queryApiContract('ClickHouse 18.16 (real Postgres)', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20, QUERY_MAX_RESULT_BYTES: 1024 * 1024 }))

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
    expect(error.kind).toBe('client_closed')
    // the server no longer runs it (18.16 notices the closed connection when it next writes; wait for that)
    let still = 1
    for (let i = 0; i < 100 && still > 0; i++) {
      still = Number((await ch.query("SELECT count() FROM system.processes WHERE query LIKE '%cityHash64(number)) FROM system.numbers%' AND query NOT LIKE '%system.processes%'")).trim())
      if (still > 0) await Bun.sleep(100)
    }
    expect(still).toBe(0)
  })
})

// what one statement may cost on ClickHouse 18.16, and what the client is told
describe('ClickHouse query runner: budgets', () => {
  const own = (sql: string, limit = 0) => ({ sql, params: new Params('clickhouse-legacy'), columns: ['x'], types: [], limit, offset: 0 })
  /** statements of this file's runners still running on the server */
  const running = async (ch: { query(sql: string): Promise<string> }, marker: string) =>
    Number((await ch.query(`SELECT count() FROM system.processes WHERE query LIKE '%${marker}%' AND query NOT LIKE '%system.processes%'`)).trim())
  const gone = async (ch: { query(sql: string): Promise<string> }, marker: string) => {
    let left = await running(ch, marker)
    for (let i = 0; i < 50 && left > 0; i++) {
      await Bun.sleep(100)
      left = await running(ch, marker)
    }
    return left === 0
  }

  test('an answer past its byte budget: the rows that fit (truncated), read as they come, and the statement killed', async () => {
    const ch = await sharedClickHouse()
    const runner = new ClickHouseQueryRunner(`${ch.url}/default`)
    const started = performance.now()
    // ~1 KB a row, endless: without a budget it would fill the memory of this process
    const answer = await runner.run(own(`SELECT concat(toString(number), '${'x'.repeat(1000)}') AS budget_probe FROM system.numbers`), { teamId: 1, timeoutMs: 30_000, maxBytes: 1024 * 1024 })
    console.log(`1 MiB budget: ${answer.rows.length} rows in ${(performance.now() - started).toFixed(0)} ms`)
    expect(answer.truncated).toBe(true)
    expect(answer.rows.length).toBeGreaterThan(900)
    expect(answer.rows.length).toBeLessThan(1100)
    expect(answer.rows[0]![0]).toStartWith('0x')
    expect(await gone(ch, 'budget_probe')).toBe(true)
    // the result limits (max_result_rows = offset + limit + 1) apply to the answer, not to a subquery's rows
    expect((await runner.run(own('SELECT count() FROM (SELECT number FROM numbers(100000))', 1), { teamId: 1, timeoutMs: 30_000 })).rows).toEqual([['100000']])
    const first = await runner.run(own(`SELECT concat(toString(number), '${'y'.repeat(1000)}') FROM system.numbers`), { teamId: 1, timeoutMs: 30_000, maxBytes: 500 }).catch((e) => e)
    expect(first).toMatchObject({ kind: 'too_large' })
  })

  test('QUERY_MAX_MEMORY reaches the server: a query needing more is refused in phog’s words', async () => {
    const ch = await sharedClickHouse()
    const runner = new ClickHouseQueryRunner(`${ch.url}/default`, { maxMemoryBytes: 16 * 1024 * 1024 })
    const error = await runner.run(own('SELECT count() FROM (SELECT number FROM numbers(1000000) GROUP BY number)'), { teamId: 1, timeoutMs: 30_000 }).catch((e) => e)
    expect(error).toMatchObject({ kind: 'query' })
    expect(error.message).toMatch(/more memory than a query may use/)
    expect(error.message).not.toMatch(/Code:|DB::|e\.what/)
    // the default (1 GiB) lets it run
    expect((await new ClickHouseQueryRunner(`${ch.url}/default`).run(own('SELECT count() FROM (SELECT number FROM numbers(1000000) GROUP BY number)'), { teamId: 1, timeoutMs: 30_000 })).rows).toEqual([['1000000']])
  })

  test('at the timeout the statement is killed on the server', async () => {
    const ch = await sharedClickHouse()
    const runner = new ClickHouseQueryRunner(`${ch.url}/default`)
    const error = await runner.run(own('SELECT sum(cityHash64(number)) AS timeout_probe FROM system.numbers'), { teamId: 1, timeoutMs: 1500 }).catch((e) => e)
    expect(error).toMatchObject({ kind: 'timeout' })
    expect(await gone(ch, 'timeout_probe')).toBe(true)
  })

  test('store errors in phog’s words; the store unreachable is unavailable (503)', async () => {
    const ch = await sharedClickHouse()
    const runner = new ClickHouseQueryRunner(`${ch.url}/default`)
    const notDate = await runner.run(own("SELECT toDate('x')"), { teamId: 1, timeoutMs: 5_000 }).catch((e) => e)
    expect(notDate.message).toBe('The query failed: a text value is not a date')
    const other = await runner.run(own('SELECT throwIf(1)'), { teamId: 1, timeoutMs: 5_000 }).catch((e) => e)
    expect(other.message).toBe('query failed: ClickHouse error 395')
    expect(String(other.cause?.message)).toMatch(/throwIf/) // the store's words stay on the cause (for the logs)
    const down = new QueryService(new ClickHouseQueryRunner(`http://default:@127.0.0.1:${await freePort()}/default`), { timeoutMs: 5_000, maxResultBytes: 1024 * 1024 })
    const refused = await down.run(1, 'SELECT count() FROM events').catch((e) => e)
    expect(refused).toMatchObject({ status: 503, code: 'event_store_unavailable' })
  })

  test('slots are shared fairly: one project’s slow queries leave another’s quick one a slot', async () => {
    const ch = await sharedClickHouse()
    const runner = new ClickHouseQueryRunner(`${ch.url}/default`, { slots: 2 })
    const slow = Array.from({ length: 3 }, () => runner.run(own('SELECT sleep(2) AS fair_probe'), { teamId: 1, timeoutMs: 30_000 }))
    await Bun.sleep(100)
    expect(runner.slotUse()).toEqual({ running: 1, waiting: 2 })
    const started = performance.now()
    expect((await runner.run(own('SELECT 1'), { teamId: 2, timeoutMs: 30_000 })).rows).toEqual([[1]])
    const quick = performance.now() - started
    console.log(`project 2's query: ${quick.toFixed(0)} ms while project 1 has 3 queries of 2 s (1 running, 2 waiting)`)
    expect(quick).toBeLessThan(1500) // not behind project 1's queue (6 s)
    await Promise.all(slow)
  })
})
