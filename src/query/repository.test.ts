// The embedded store's query runner: statements run in a child process, stopped (the process killed) when their
// time is up or their client goes away; the next statement gets a fresh process.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Params } from './dialect'
import { QueryRunError, SqliteQueryRunner } from './repository'

const statement = (sql: string) => ({ sql, params: new Params('sqlite'), columns: ['x'], types: [], limit: 1, offset: 0 })
// a statement that runs for minutes: SQLite's step loop, which JavaScript cannot interrupt
const ENDLESS = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000000000) SELECT count(*) FROM c'

describe('SqliteQueryRunner', () => {
  let dir: string
  let runner: SqliteQueryRunner
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'phog-sqlite-runner-'))
    const db = new Database(join(dir, 'events.sqlite'))
    db.run('CREATE TABLE t (x INTEGER)')
    db.run('INSERT INTO t VALUES (1), (2)')
    db.run('CREATE TABLE big (s TEXT)')
    const insert = db.prepare('INSERT INTO big VALUES (?)')
    for (let i = 0; i < 1000; i++) insert.run(`${i}:${'x'.repeat(1000)}`)
    insert.run('y'.repeat(300_000))
    db.close()
    runner = new SqliteQueryRunner(join(dir, 'events.sqlite'), 1)
  })
  afterAll(async () => {
    await runner.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('answers rows as arrays, with bound parameters', async () => {
    const q = statement('SELECT x, ?1 FROM t ORDER BY x')
    q.params.string("it's")
    expect((await runner.run(q, { teamId: 1, timeoutMs: 10_000 })).rows).toEqual([[1, "it's"], [2, "it's"]])
    // the same statement again, in the same process
    expect((await runner.run(q, { teamId: 1, timeoutMs: 10_000 })).rows).toEqual([[1, "it's"], [2, "it's"]])
  })

  test('past its time: a timeout, and the process is gone; the next statement answers', async () => {
    const error = await runner.run(statement(ENDLESS), { teamId: 1, timeoutMs: 300 }).catch((e) => e)
    expect(error).toBeInstanceOf(QueryRunError)
    expect(error.kind).toBe('timeout')
    expect((await runner.run(statement('SELECT count(*) FROM t'), { teamId: 1, timeoutMs: 10_000 })).rows).toEqual([[2]])
  })

  test('a client that goes away stops its statement', async () => {
    const gone = new AbortController()
    const running = runner.run(statement(ENDLESS), { teamId: 1, timeoutMs: 600_000, signal: gone.signal }).catch((e) => e)
    await Bun.sleep(200)
    gone.abort()
    expect(await running).toMatchObject({ kind: 'client_closed' })
    // the slot is free again and the next statement answers (in a fresh process: the stopped one was killed)
    expect((await runner.run(statement('SELECT 1'), { teamId: 1, timeoutMs: 5_000 })).rows).toEqual([[1]])
  })

  test('closing stops running statements too', async () => {
    const own = new SqliteQueryRunner(join(dir, 'events.sqlite'), 1)
    const running = own.run(statement(ENDLESS), { teamId: 1, timeoutMs: 600_000 }).catch((e) => e)
    await Bun.sleep(200)
    await own.close()
    expect(await running).toMatchObject({ kind: 'unavailable' })
  })

  test('a statement the store refuses is the query’s fault', async () => {
    const error = await runner.run(statement('SELECT nope FROM t'), { teamId: 1, timeoutMs: 5_000 }).catch((e) => e)
    expect(error).toMatchObject({ kind: 'query' })
    // in phog's words: the store's text (which names what it met, and where) stays on the cause
    expect(error.message).toBe('query failed: SQLITE_ERROR')
    expect(String(error.cause?.message)).toMatch(/nope/)
    const nested = await runner.run(statement('SELECT count(count(*)) FROM t'), { teamId: 1, timeoutMs: 5_000 }).catch((e) => e)
    expect(nested.message).toMatch(/aggregate function/)
  })

  test('rows past the byte budget are not read: the answer says truncated; a first row past it is too_large', async () => {
    const { rows, truncated } = await runner.run(statement("SELECT s FROM big WHERE s NOT LIKE 'y%' ORDER BY rowid"), { teamId: 1, timeoutMs: 10_000, maxBytes: 100_000 })
    console.log(`a 100,000-byte budget: ${rows.length} of 1000 rows of ~1 KB read`)
    expect(truncated).toBe(true)
    expect(rows.length).toBeGreaterThan(90)
    expect(rows.length).toBeLessThan(100)
    expect(rows[0]![0]).toStartWith('0:') // the first rows, in order
    const whole = await runner.run(statement("SELECT s FROM big WHERE s NOT LIKE 'y%'"), { teamId: 1, timeoutMs: 10_000, maxBytes: 2_000_000 })
    expect(whole).toMatchObject({ truncated: false })
    expect(whole.rows).toHaveLength(1000)
    const huge = await runner.run(statement("SELECT s FROM big WHERE s LIKE 'y%'"), { teamId: 1, timeoutMs: 10_000, maxBytes: 100_000 }).catch((e) => e)
    expect(huge).toMatchObject({ kind: 'too_large' })
  })
})
