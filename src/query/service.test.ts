// The query service's side of the compile budget: compiling counts in QUERY_TIMEOUT_MS (past it: 504
// query_timeout, nothing run), a query past a limit is a 400 naming it, and both are counted in /metrics.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ApiError } from '../http/errors'
import { createMetrics } from '../ops/metrics'
import { CompileThread } from './compile-thread'
import { ClickHouseQueryRunner, SqliteQueryRunner } from './repository'
import { QueryService } from './service'

for (const where of ['on the caller’s thread', 'on a thread of its own'] as const) describe(`QueryService: compiling within the query’s budget, ${where}`, () => {
  let dir: string
  let runner: SqliteQueryRunner
  const thread = where === 'on a thread of its own' ? new CompileThread() : undefined
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'phog-query-service-'))
    const db = new Database(join(dir, 'events.sqlite'))
    db.run('CREATE TABLE events (uuid TEXT, team_id INTEGER, event TEXT, distinct_id TEXT, properties TEXT, timestamp INTEGER, created_at INTEGER)')
    db.close()
    runner = new SqliteQueryRunner(join(dir, 'events.sqlite'), 1)
  })
  afterAll(async () => {
    thread?.close()
    await runner.close()
    rmSync(dir, { recursive: true, force: true })
  })

  const failure = (promise: Promise<unknown>) => promise.then(() => { throw new Error('answered') }, (error) => error as ApiError)
  const counted = async (metrics: ReturnType<typeof createMetrics>, limit: string) =>
    (await metrics.queryCompileRefused.get()).values.find((v) => v.labels.limit === limit)?.value ?? 0

  test('a query whose compiling outlasts QUERY_TIMEOUT_MS is answered 504 query_timeout', async () => {
    const metrics = createMetrics()
    const service = new QueryService(runner, { timeoutMs: 0, maxResultBytes: 64 * 1024 * 1024, metrics, compiler: thread }) // the deadline is the moment run() starts
    const error = await failure(service.run(1, `SELECT count() FROM events WHERE ${Array(5_000).fill("event = 'x'").join(' OR ')}`))
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 504, code: 'query_timeout' })
    expect(await counted(metrics, 'time')).toBe(1)
  })

  test('a query past a limit is 400 invalid_query naming it, counted by limit; a plain one runs', async () => {
    const metrics = createMetrics()
    const service = new QueryService(runner, { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024, metrics, compiler: thread })
    const chain = `SELECT event AS a0, ${Array.from({ length: 23 }, (_, i) => `concat(a${i}, a${i}) AS a${i + 1}`).join(', ')} FROM events`
    const error = await failure(service.run(1, chain))
    expect(error).toMatchObject({ status: 400, code: 'invalid_query', attr: 'query' })
    expect(error.detail).toMatch(/larger than 262144 bytes/)
    expect(await counted(metrics, 'statement')).toBe(1)
    expect(await service.run(1, 'SELECT count() FROM events')).toMatchObject({ results: [[0]] })
    expect((await metrics.queryCompileSeconds.get()).values.find((v) => v.metricName === 'query_compile_seconds_count')?.value).toBe(2) // the refused one held the thread too
  })
})

test('a ClickHouse that cannot be reached while its dialect is read: the runner’s error, mapped, not a 500', async () => {
  const service = new QueryService(new ClickHouseQueryRunner('http://127.0.0.1:1/nowhere'), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024, metrics: createMetrics() })
  const error = await service.run(1, 'SELECT count() FROM events').then(() => null, (e) => e as ApiError)
  expect(error).toBeInstanceOf(ApiError)
  expect(error!.status).not.toBe(500)
})
