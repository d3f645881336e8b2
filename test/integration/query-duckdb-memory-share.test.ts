// DuckDB's memory is one pool (EMBEDDED_DUCKDB_MEMORY_MB): one project's memory-heavy queries used to make another
// project's ordinary queries fail with 400 "needs more memory than a query may use … narrow it", blaming the victim.
// Now a statement that runs short of memory beside others is run again alone before it is blamed, and a wait for
// that turn past EMBEDDED_DUCKDB_BUSY_WAIT_MS is a retryable 503 store_busy: the neighbour never gets a 4xx, and a
// query that does not fit even alone still gets its 400.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { DuckDbDatabase } from '../../src/events/duckdb-database'
import { StatementRefused } from '../../src/events/duckdb-turns'
import { duckDbFile, duckDbSettings } from '../../src/events/factory'
import { ApiError } from '../../src/http/errors'
import { createMetrics } from '../../src/ops/metrics'
import { createProject } from '../../src/projects/repository'
import { DuckDbQueryRunner } from '../../src/query/duckdb-runner'
import { QueryService } from '../../src/query/service'
import { json, startStack, type Stack } from '../helpers/stack'
import { tempDir } from '../helpers/temp'

const ROWS = 60_000
/** a page of events sorted by their properties (1.5 kB each): about half of 64 MB, it fits alone */
const HEAVY_FITS = 'SELECT uuid, distinct_id, properties FROM events ORDER BY properties DESC LIMIT 2000'
/** every distinct properties text of 60,000 events (90 MB of text): more than 64 MB even alone */
const TOO_LARGE = 'SELECT DISTINCT properties FROM events'
/** a full sort of the wide events, read a few rows at a time: it runs short of memory too */
const TOO_LARGE_SORT = 'SELECT uuid, properties FROM events ORDER BY uuid LIMIT 100000'
const ATTACK = [TOO_LARGE, HEAVY_FITS, TOO_LARGE_SORT, HEAVY_FITS]
/** the neighbour's ordinary reads: its latest events (an events list), and a count by event */
const LIST = 'SELECT uuid, event, properties, timestamp FROM events ORDER BY timestamp DESC LIMIT 100'
const COUNT = 'SELECT event, count() FROM events GROUP BY event ORDER BY event'
const NEIGHBOUR_EVENTS = 30

const tally = (statuses: string[]) => Object.fromEntries([...new Set(statuses)].sort().map((s) => [s, statuses.filter((x) => x === s).length]))

describe('DuckDB short of memory: the neighbour of a memory-heavy project is not blamed', () => {
  let stack: Stack
  let neighbour: number
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb', EMBEDDED_DUCKDB_MEMORY_MB: 64 })
    neighbour = (await createProject(stack.services.db.sql, { name: 'Neighbour', token: 'phc_query_duckdb_neighbour_01' })).id
    const now = Date.now()
    const pad = 'x'.repeat(1500)
    for (let start = 0; start < ROWS; start += 10_000) {
      const rows = Array.from({ length: 10_000 }, (_, j) => {
        const i = start + j
        return { uuid: crypto.randomUUID(), teamId: 1, event: `event-${i % 20}`, distinctId: `user-${i % 3000}`, properties: JSON.stringify({ a: `${i}-${Math.random()}`, pad }), timestamp: now - i * 1000, createdAt: now, personId: null }
      })
      await stack.services.events.insertBatch(rows, { inDoubt: false })
    }
    const mine = Array.from({ length: NEIGHBOUR_EVENTS }, (_, i) => ({ uuid: crypto.randomUUID(), teamId: neighbour, event: `e${i % 3}`, distinctId: `n-${i}`, properties: JSON.stringify({ i }), timestamp: now - i, createdAt: now, personId: null }))
    await stack.services.events.insertBatch(mine, { inDoubt: false })
  }, 120_000)
  afterAll(() => stack?.close())

  const post = (project: number, query: string) => stack.api(`/api/projects/${project}/query/`, { method: 'POST', json: { query: { kind: 'HogQLQuery', query } } })

  /** The neighbour's query as a client runs it: a 503 store_busy is retried (after a short pause), anything else is its answer. */
  async function neighbourQuery(query: string, statuses: string[]): Promise<{ status: number; body: any }> {
    for (;;) {
      const r = await post(neighbour, query)
      const body = await json(r)
      statuses.push(r.status === 200 ? '200' : `${r.status} ${body.code}`)
      if (r.status !== 503) return { status: r.status, body }
      // the refusal is retryable and says when, in the usual envelope
      expect(body).toMatchObject({ type: 'server_error', code: 'store_busy' })
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
      await Bun.sleep(50)
    }
  }

  test('a query that does not fit even alone is 400 naming the memory limit', async () => {
    const r = await post(1, TOO_LARGE)
    const body = await json(r)
    console.log(`alone: ${r.status} ${body.code}: ${body.detail}`)
    expect(r.status).toBe(400)
    expect(body).toMatchObject({ code: 'invalid_query', attr: 'query' })
    expect(body.detail).toContain('EMBEDDED_DUCKDB_MEMORY_MB')
    expect(body.detail).toContain('even with no other query running')
    expect((await post(1, HEAVY_FITS)).status).toBe(200)
  }, 60_000)

  test("one project's memory-heavy queries, four at a time: the neighbour's ordinary queries never get a 4xx, and all answer 200 in the end", async () => {
    let attacking = true
    const attacker: string[] = []
    const clients = Array.from({ length: 4 }, async (_, c) => {
      for (let i = c; attacking; i++) {
        const query = ATTACK[i % ATTACK.length]!
        const r = await post(1, query)
        const body = await json(r)
        attacker.push(`${r.status === 200 ? '200' : `${r.status} ${body.code}`} ${query === HEAVY_FITS ? 'fits' : 'too large'}`)
        if (r.status === 503) expect(r.headers.get('retry-after')).not.toBeNull()
      }
    })
    const statuses: string[] = []
    const started = performance.now()
    let answered = 0
    try {
      while (performance.now() - started < 15_000 || answered < 40) {
        const list = await neighbourQuery(LIST, statuses)
        expect(list.status).toBe(200)
        expect(list.body.results).toHaveLength(NEIGHBOUR_EVENTS)
        const counts = await neighbourQuery(COUNT, statuses)
        expect(counts.status).toBe(200)
        expect(counts.body.results).toEqual([['e0', 10], ['e1', 10], ['e2', 10]])
        answered += 2
      }
    } finally {
      attacking = false
      await Promise.all(clients)
    }
    console.log(`the neighbour: ${answered} queries answered 200 in ${((performance.now() - started) / 1000).toFixed(1)} s; every answer: ${JSON.stringify(tally(statuses))}`)
    console.log(`the memory-heavy project: ${JSON.stringify(tally(attacker))}`)
    expect(statuses.filter((s) => s.startsWith('4'))).toEqual([])
    expect(statuses.every((s) => s === '200' || s === '503 store_busy')).toBe(true)
    // the attacker's queries that fit alone answer 200 or 503 (retry); those that never fit get their 400 all the same
    expect(attacker.filter((s) => s.endsWith('fits')).every((s) => s.startsWith('200') || s.startsWith('503 store_busy'))).toBe(true)
    expect(attacker.filter((s) => s.endsWith('too large')).every((s) => s.startsWith('400 invalid_query') || s.startsWith('503 store_busy'))).toBe(true)
    expect(attacker.some((s) => s === '400 invalid_query too large')).toBe(true)
  }, 180_000)

  test('a runner whose turns may not wait (busy wait 0): the neighbour gets rows or 503 store_busy, never a 400; each outcome counted', async () => {
    const metrics = createMetrics()
    // a second runner on the same store (as a second analytics thread has): its turns are the store's, shared
    const runner = new DuckDbQueryRunner(duckDbFile(stack.config), duckDbSettings(stack.config), { busyWaitMs: 0, metrics })
    const service = new QueryService(runner, { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const outcome = (error: unknown) => (error instanceof ApiError ? `${error.status} ${error.code}` : String(error))
    const counted = async () => Object.fromEntries((await metrics.embeddedDuckDbShortOfMemory.get()).values.map((v) => [v.labels.outcome, v.value]))
    let attacking = true
    const attacker: string[] = []
    const clients = Array.from({ length: 4 }, async (_, c) => {
      for (let i = c; attacking; i++) attacker.push(await service.run(1, ATTACK[i % ATTACK.length]!).then(() => '200', outcome))
    })
    const neighbourAnswers: string[] = []
    const started = performance.now()
    try {
      // until the store ran short beside others and a turn alone was refused, a few times over (at most 60 s)
      for (;;) {
        const seen = await counted()
        if (((seen.retried_alone ?? 0) >= 3 && (seen.store_busy ?? 0) >= 3) || performance.now() - started > 60_000) break
        for (const query of [LIST, COUNT]) neighbourAnswers.push(await service.run(neighbour, query).then(() => '200', outcome))
      }
    } finally {
      attacking = false
      await Promise.all(clients)
      await runner.close()
    }
    const seen = await counted()
    console.log(`busy wait 0: the neighbour ${JSON.stringify(tally(neighbourAnswers))}; the memory-heavy project ${JSON.stringify(tally(attacker))}; counted ${JSON.stringify(seen)}`)
    expect(neighbourAnswers.every((s) => s === '200' || s === '503 store_busy')).toBe(true)
    expect(attacker.every((s) => s === '200' || s === '503 store_busy' || s.startsWith('400'))).toBe(true)
    expect(seen.retried_alone).toBeGreaterThanOrEqual(1)
    expect(seen.store_busy).toBeGreaterThanOrEqual(1)
    expect(seen.store_busy).toBe([...neighbourAnswers, ...attacker].filter((s) => s === '503 store_busy').length)
  }, 180_000)
})

// Writes come first: a batch of events that runs short of memory beside query statements stops them (refused as
// busy: a 503 the client retries) and lands at once. Before, the batch failed (the flush retried it later, logging an
// outage of the store) and a statement that had run "alone" beside the write was blamed with a 400.
test('a write short of memory beside query statements stops them and lands; no write fails', async () => {
  const db = await DuckDbDatabase.open(join(tempDir('phog-duckdb-writes-'), 'events.duckdb'), { memoryMb: 64, threads: 2 })
  const pad = 'x'.repeat(1500)
  const now = Date.now()
  let made = 0
  const wide = (n: number) =>
    Array.from({ length: n }, (_, j) => {
      const i = made++
      return { uuid: crypto.randomUUID(), teamId: 1, event: `e${j % 20}`, distinctId: `u-${j % 3000}`, properties: JSON.stringify({ a: `${i}-${Math.random()}`, pad }), timestamp: now - i * 1000, createdAt: now, personId: null }
    })
  try {
    for (let i = 0; i < 6; i++) await db.insertEvents(wide(10_000), false)
    const outcomes: string[] = []
    let landed = 0
    let key = 0
    const started = performance.now()
    // rounds until statements were stopped for a write (at most 60 s)
    while (!outcomes.includes('busy') && performance.now() - started < 60_000) {
      const statements = Array.from({ length: 3 }, () =>
        db.stream(`w:${key++}`, HEAVY_FITS, [], 64 * 1024 * 1024).then(
          () => 'rows',
          (e) => (e instanceof StatementRefused ? e.failure : `error: ${(e as Error).message}`),
        ),
      )
      await Bun.sleep(30)
      landed += await db.insertEvents(wide(5_000), false) // throws if the write failed
      outcomes.push(...(await Promise.all(statements)))
    }
    console.log(`writes first: ${landed} events landed beside ${outcomes.length} statements: ${JSON.stringify(tally(outcomes))}`)
    expect(outcomes.every((o) => o === 'rows' || o === 'short_beside' || o === 'busy')).toBe(true)
    expect(outcomes.filter((o) => o === 'busy').length).toBeGreaterThanOrEqual(1)
    expect(Number((await db.all('SELECT count(*) FROM events'))[0]![0])).toBe(made)
  } finally {
    await db.close()
  }
}, 120_000)

// The turns on a real DuckDB instance, made to happen at will: a long statement holds the store, a turn alone waits
// for it (refused past its wait), and what comes after a turn alone waits behind it.
test('turns alone on the DuckDB instance: refused past their wait, served once the store is theirs, others held behind', async () => {
  const db = await DuckDbDatabase.open(join(tempDir('phog-duckdb-turns-'), 'events.duckdb'), { memoryMb: 64, threads: 2 })
  try {
    const long = db.stream('c:1', 'SELECT count(*) FROM range(20000000000) t(i) WHERE i % 7 = 3', [], 1024)
    long.catch(() => undefined)
    await Bun.sleep(100)
    const refusedAlone = await db.stream('c:2', 'SELECT 1', [], 1024, { alone: true, waitMs: 100 }).catch((e) => e)
    expect(refusedAlone).toBeInstanceOf(StatementRefused)
    expect(refusedAlone.failure).toBe('busy')
    // side by side, as before, while no turn alone waits
    expect((await db.stream('c:3', 'SELECT 2', [], 1024, { waitMs: 100 })).rows).toEqual([[2]])
    const alone = db.stream('c:4', 'SELECT 42', [], 1024, { alone: true, waitMs: 10_000 })
    const behind = await db.stream('c:5', 'SELECT 7', [], 1024, { waitMs: 100 }).catch((e) => e)
    expect(behind.failure).toBe('busy')
    const started = performance.now()
    db.interrupt('c:1')
    expect((await long.catch((e) => e)).message).toContain('INTERRUPT')
    expect((await alone).rows).toEqual([[42]])
    console.log(`the turn alone ran ${(performance.now() - started).toFixed(0)} ms after the long statement was interrupted`)
    // a statement interrupted while it waits for its turn leaves the line
    const holder = db.stream('c:6', 'SELECT count(*) FROM range(20000000000) t(i) WHERE i % 7 = 3', [], 1024)
    holder.catch(() => undefined)
    await Bun.sleep(50)
    const waiting = db.stream('c:7', 'SELECT 1', [], 1024, { alone: true })
    await Bun.sleep(50)
    db.interrupt('c:7')
    expect((await waiting.catch((e) => e)).message).toContain('INTERRUPT')
    db.interrupt('c:6')
    await holder.catch(() => undefined)
  } finally {
    await db.close()
  }
}, 60_000)

