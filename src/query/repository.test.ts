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
    expect(await runner.run(q, { timeoutMs: 10_000 })).toEqual([[1, "it's"], [2, "it's"]])
  })

  test('past its time: a timeout, and the process is gone; the next statement answers', async () => {
    const error = await runner.run(statement(ENDLESS), { timeoutMs: 300 }).catch((e) => e)
    expect(error).toBeInstanceOf(QueryRunError)
    expect(error.kind).toBe('timeout')
    expect(await runner.run(statement('SELECT count(*) FROM t'), { timeoutMs: 10_000 })).toEqual([[2]])
  })

  test('a client that goes away stops its statement', async () => {
    const gone = new AbortController()
    const running = runner.run(statement(ENDLESS), { timeoutMs: 600_000, signal: gone.signal }).catch((e) => e)
    await Bun.sleep(200)
    gone.abort()
    expect(await running).toBeInstanceOf(QueryRunError)
    // the slot is free again and the next statement answers (in a fresh process: the stopped one was killed)
    expect(await runner.run(statement('SELECT 1'), { timeoutMs: 5_000 })).toEqual([[1]])
  })

  test('closing stops running statements too', async () => {
    const own = new SqliteQueryRunner(join(dir, 'events.sqlite'), 1)
    const running = own.run(statement(ENDLESS), { timeoutMs: 600_000 }).catch((e) => e)
    await Bun.sleep(200)
    await own.close()
    expect(await running).toMatchObject({ kind: 'unavailable' })
  })

  test('a statement the store refuses is the query’s fault', async () => {
    const error = await runner.run(statement('SELECT nope FROM t'), { timeoutMs: 5_000 }).catch((e) => e)
    expect(error).toMatchObject({ kind: 'query' })
  })
})
