// The query API's limits on the embedded DuckDB store (EMBEDDED_EVENT_STORE=duckdb), whose statements run in this
// process on DuckDB's own threads: one past QUERY_TIMEOUT_MS is interrupted (504) while /decide keeps answering;
// clients that leave are 499 and their statements stop (the process's CPU falls back to idle); slots are shared
// fairly between projects.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { BASE, json, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

const ROWS = 500_000
// about 1.5 s of DuckDB's work on 500,000 rows (2 threads, 128 MiB)
const HEAVY = "SELECT count(DISTINCT concat(a, b)) FROM (SELECT concat(properties, toString(timestamp)) AS a, lower(concat(distinct_id, properties)) AS b FROM events WHERE properties.a LIKE '%1%' ORDER BY a DESC, b)"

/** CPU this process used over `ms` (all threads: DuckDB's too), in ms */
async function cpuOver(ms: number): Promise<number> {
  const before = process.cpuUsage()
  await Bun.sleep(ms)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / 1000
}

describe('query API limits on the embedded DuckDB store', () => {
  let stack: Stack
  let other: number
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, QUERY_TIMEOUT_MS: 400, EMBEDDED_EVENT_STORE: 'duckdb' })
    other = (await createProject(stack.services.db.sql, { name: 'Quick', token: 'phc_query_duckdb_quick_01' })).id
    const now = Date.now()
    for (let start = 0; start < ROWS; start += 50_000) {
      const rows = Array.from({ length: 50_000 }, (_, j) => {
        const i = start + j
        return { uuid: crypto.randomUUID(), teamId: 1, event: `event-${i % 50}`, distinctId: `user-${i % 5000}`, properties: JSON.stringify({ a: `value-${i}`, n: i }), timestamp: now - i * 1000, createdAt: now, personId: null }
      })
      await stack.services.events.insertBatch(rows, { inDoubt: false })
    }
    await stack.services.events.insertBatch(Array.from({ length: 25 }, (_, i) => ({ uuid: crypto.randomUUID(), teamId: other, event: 'quick', distinctId: `q-${i}`, properties: '{}', timestamp: now - i, createdAt: now, personId: null })), { inDoubt: false })
  }, 120_000)
  afterAll(() => stack?.close())

  // the stack's own API call (the test's personal key)
  const post = (project: number, query: string, signal?: AbortSignal) =>
    stack.api(`/api/projects/${project}/query/`, { method: 'POST', json: { query: { kind: 'HogQLQuery', query } }, signal })
  const decide = async () => {
    const started = performance.now()
    const r = await stack.app.handle(new Request(`${BASE}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'd' }) }))
    expect(r.status).toBe(200)
    return performance.now() - started
  }

  test("DuckDB's memory, held and allowed (EMBEDDED_DUCKDB_MEMORY_MB), is in /metrics", async () => {
    const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
    expect(text).toContain(`embedded_duckdb_memory_bytes{state="limit"} ${128 * 1024 * 1024}`)
    const used = Number(/^embedded_duckdb_memory_bytes\{state="used"\} (\d+)/m.exec(text)?.[1])
    console.log(`DuckDB holds ${(used / 1024 / 1024).toFixed(1)} MiB after 500,000 events`)
    expect(used).toBeGreaterThan(0)
    expect(used).toBeLessThanOrEqual(128 * 1024 * 1024)
  })

  test('a query past QUERY_TIMEOUT_MS is interrupted: 504 query_timeout, /decide answers meanwhile, the work stops', async () => {
    const idle = await cpuOver(500)
    const started = performance.now()
    const heavy = post(1, HEAVY)
    let done = false
    void heavy.finally(() => (done = true))
    const during: number[] = []
    while (!done) {
      during.push(await decide())
      await Bun.sleep(2)
    }
    const r = await heavy
    const answeredMs = performance.now() - started
    expect(r.status).toBe(504)
    expect(await json(r)).toMatchObject({ type: 'server_error', code: 'query_timeout' })
    expect(during.length).toBeGreaterThan(0)
    const worst = Math.max(...during)
    const cpu = await cpuOver(500)
    console.log(`504 after ${answeredMs.toFixed(0)} ms; /decide answered ${during.length} times meanwhile (worst ${worst.toFixed(1)} ms); CPU over 500 ms: ${idle.toFixed(0)} ms idle before, ${cpu.toFixed(0)} ms after the 504`)
    // interrupted, not left running on DuckDB's threads (which would use about 1,000 ms of CPU in 500 ms)
    expect(cpu).toBeLessThan(400)
    const small = await json(post(1, "SELECT count() FROM events WHERE distinct_id = 'user-7'"))
    expect(small.results).toEqual([[100]])
  }, 60_000)

  test('one project holds half the slots; another project answers at once; clients that leave are 499 and their statements stop', async () => {
    const clients = [new AbortController(), new AbortController(), new AbortController()]
    const heavy = clients.map((c) => post(1, HEAVY, c.signal))
    for (let i = 0; i < 200 && (await stack.services.analytics.slotUse()).waiting < 2; i++) await Bun.sleep(10)
    expect(await stack.services.analytics.slotUse()).toEqual({ running: 1, waiting: 2 })
    const quick = await post(other, 'SELECT count() FROM events')
    expect(quick.status).toBe(200)
    expect((await json(quick)).results).toEqual([[25]])
    for (const c of clients) c.abort()
    const answers = await Promise.all(heavy)
    expect(answers.map((r) => r.status)).toEqual([499, 499, 499])
    for (let i = 0; i < 100 && (await stack.services.analytics.slotUse()).running > 0; i++) await Bun.sleep(20)
    expect(await stack.services.analytics.slotUse()).toEqual({ running: 0, waiting: 0 })
    const cpu = await cpuOver(500)
    console.log(`CPU over the 500 ms after three clients left: ${cpu.toFixed(0)} ms`)
    expect(cpu).toBeLessThan(400)
  }, 60_000)
})
