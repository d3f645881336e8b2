// Attacks on the query API of the embedded DuckDB store (EMBEDDED_EVENT_STORE=duckdb) by a key holder: patterns
// that make a backtracking matcher take exponential time, and what the runner does with a statement DuckDB does not
// stop when interrupted.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { DuckDbEventStore } from '../../src/events/duckdb'
import { Params } from '../../src/query/dialect'
import { DuckDbQueryRunner } from '../../src/query/duckdb-runner'
import { BASE, json, PERSONAL_KEY, startStack, type Stack } from '../helpers/stack'
import { tempDir } from '../helpers/temp'

const TIMEOUT_MS = 2000
/** a LIKE pattern with 30 wildcards: DuckDB's GLOB and LIKE try every way to place them */
const EXPONENTIAL = `${'%x'.repeat(30)}%y`

describe('LIKE patterns on the embedded DuckDB store', () => {
  let stack: Stack
  const texts: string[] = []
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, QUERY_TIMEOUT_MS: TIMEOUT_MS, EMBEDDED_EVENT_STORE: 'duckdb' })
    const now = Date.now()
    const rows = Array.from({ length: 2000 }, (_, i) => {
      const properties = JSON.stringify({ a: `${'x'.repeat(2000)}${i}` })
      texts.push(properties)
      return { uuid: crypto.randomUUID(), teamId: 1, event: i % 2 ? 'X-Event' : 'x_event', distinctId: `u${i}`, properties, timestamp: now - i, createdAt: now, personId: null }
    })
    await stack.services.events.insertBatch(rows, { inDoubt: false })
  }, 120_000)
  afterAll(() => stack?.close())

  const count = async (where: string) => {
    const started = performance.now()
    const r = await stack.app.handle(
      new Request(`${BASE}/api/projects/1/query/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: { kind: 'HogQLQuery', query: `SELECT count() FROM events WHERE ${where}` } }),
      }),
    )
    const ms = performance.now() - started
    console.log(`${r.status} in ${ms.toFixed(0)} ms: ${where.slice(0, 80)}`)
    return { status: r.status, body: await json(r), ms }
  }

  test('a pattern with 30 wildcards over 2,000 texts of 2 kB answers well within QUERY_TIMEOUT_MS (it used to run for ever)', async () => {
    for (const where of [`properties LIKE '${EXPONENTIAL}'`, `properties ILIKE '${EXPONENTIAL.replace(/x/g, 'X')}'`, `properties NOT LIKE '${'%_x'.repeat(30)}%y'`]) {
      const { status, body, ms } = await count(where)
      expect(status).toBe(200)
      expect(body.results).toEqual([[where.includes('NOT LIKE') ? texts.length : 0]])
      expect(ms).toBeLessThan(TIMEOUT_MS * 5)
    }
  }, 120_000)

  test('LIKE still means what it meant: wildcards, escapes, case', async () => {
    // (counted with string functions: a JavaScript RegExp backtracks too)
    const expected = (holds: (t: string) => boolean) => texts.filter(holds).length
    expect((await count(`properties LIKE '%x%x%x%7"}'`)).body.results).toEqual([[expected((t) => t.endsWith('7"}'))]])
    expect((await count(`properties LIKE '{"a":"x%1_"}'`)).body.results).toEqual([[expected((t) => t.startsWith('{"a":"x') && t.at(-4) === '1')]])
    expect((await count(`event LIKE 'x\\_event'`)).body.results).toEqual([[1000]])
    expect((await count(`event LIKE 'x_event'`)).body.results).toEqual([[1000]])
    expect((await count(`event ILIKE 'x_event'`)).body.results).toEqual([[2000]])
    expect((await count(`event LIKE '%.%'`)).body.results).toEqual([[0]])
  }, 60_000)
})

// DuckDB checks its interrupt between chunks of work, not inside one function call, so a statement whose per-row
// work is long keeps running past connection.interrupt(). The runner answers 504 at the deadline whatever DuckDB
// does, and keeps the slot counted until the statement really ends (the runner waited 4 s for it before).
test('a statement DuckDB does not stop at once is answered 504 at its deadline, its slot held until it ends', async () => {
  const file = join(tempDir('phog-duckdb-attack-'), 'events.duckdb')
  const settings = { memoryMb: 128, threads: 2 }
  const store = new DuckDbEventStore(file, settings)
  await store.init()
  const now = Date.now()
  await store.insertBatch(Array.from({ length: 1000 }, (_, i) => ({ uuid: crypto.randomUUID(), teamId: 1, event: 'e', distinctId: `u${i}`, properties: `${'x'.repeat(200)}${i}`, timestamp: now - i, createdAt: now, personId: null })), { inDoubt: false })
  const runner = new DuckDbQueryRunner(file, settings)
  // GLOB with two wildcards over 1,000 texts of 200 characters: seconds of work in calls DuckDB does not interrupt
  const statement = { sql: "SELECT count(*) FROM events WHERE team_id = 1 AND properties GLOB '*x*x*y'", params: new Params('duckdb'), columns: ['n'], types: [], limit: 1, offset: 0 }
  const started = performance.now()
  const error = await runner.run(statement, { teamId: 1, timeoutMs: 300 }).catch((e) => e)
  const answeredMs = performance.now() - started
  // answered while the statement still runs: its slot is still taken
  const slotsWhenAnswered = runner.slotUse().running
  const releasedAfter = await (async () => {
    for (let i = 0; i < 600 && runner.slotUse().running > 0; i++) await Bun.sleep(100)
    return performance.now() - started
  })()
  console.log(`a statement interrupted at 300 ms was answered after ${answeredMs.toFixed(0)} ms (${error?.kind ?? 'rows'}); its slot came back after ${releasedAfter.toFixed(0)} ms`)
  try {
    expect(error?.kind).toBe('timeout')
    expect(slotsWhenAnswered).toBe(1)
    expect(runner.slotUse().running).toBe(0)
  } finally {
    await runner.close()
    await store.close()
  }
}, 120_000)
