import { expect, test } from 'bun:test'
import { statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DuckDbEventStore } from '../../src/events/duckdb'
import { accessDuckDb } from '../../src/events/duckdb-access'
import { event, eventStoreContract } from './event-store.contract'
import { tempDir } from '../helpers/temp'

const SETTINGS = { memoryMb: 128, threads: 1 }

const dir = tempDir('phog-store-duckdb-')
eventStoreContract('embedded DuckDB', {
  make: async () => {
    const store = new DuckDbEventStore(join(dir, 'events.duckdb'), SETTINGS)
    await store.init()
    return store
  },
})

// The flush worker is a thread: its store writes through the owner thread of the file (one DuckDB instance
// per process); what it writes is what the main thread reads, once.
test("a store on a worker thread writes through the owner thread, and the main thread reads it once", async () => {
  const root = tempDir('phog-store-duckdb-thread-')
  const file = join(root, 'data', 'events.duckdb')
  const owner = new DuckDbEventStore(file, SETTINGS)
  await owner.init()
  const rows = Array.from({ length: 3000 }, () => event({ teamId: 7 }))
  const worker = new Worker(new URL('../helpers/duckdb-thread-writer.ts', import.meta.url).href)
  const answer = await new Promise<{ written: number[]; counted: number; error?: string }>((resolve) => {
    worker.onmessage = (e) => resolve(e.data)
    worker.postMessage({ file, settings: SETTINGS, rows })
  })
  worker.terminate()
  expect(answer.error).toBeUndefined()
  // the second, in-doubt attempt of the same rows writes nothing
  expect(answer.written).toEqual([3000, 0])
  expect(answer.counted).toBe(3000)
  const counts = await owner.countByUuid(7, rows.map((r) => r.uuid))
  expect([...counts.values()].every((n) => n === 1)).toBe(true)
  expect(counts.size).toBe(3000)
  await owner.close()
  // private to the service: the directory it made 0700, the database file 0600
  expect(statSync(join(root, 'data')).mode & 0o777).toBe(0o700)
  expect(statSync(file).mode & 0o777).toBe(0o600)
})

// A CLI command (or a second service) while the service holds the file: a clear refusal, not DuckDB's words alone.
test('a second process cannot open the file while one holds it, and is told why', async () => {
  const file = join(tempDir('phog-store-duckdb-lock-'), 'events.duckdb')
  const owner = new DuckDbEventStore(file, SETTINGS)
  await owner.init()
  try {
    const other = Bun.spawn([process.execPath, '-e', `
      const { DuckDbEventStore } = await import(${JSON.stringify(new URL('../../src/events/duckdb.ts', import.meta.url).pathname)})
      await new DuckDbEventStore(${JSON.stringify(file)}, { memoryMb: 64, threads: 1 }).init().then(() => console.log('opened'), (e) => console.log(e.message))
    `], { stdout: 'pipe', stderr: 'inherit' })
    const said = (await new Response(other.stdout).text()).trim()
    await other.exited
    expect(said).toContain('is held by another process')
  } finally {
    await owner.close()
  }
})

// SQL reaches only the database's own file: the query API's compiler refuses such statements, and the database
// itself is the second wall (external access off, its configuration locked).
test('no file, URL or setting is reachable from SQL', async () => {
  const root = tempDir('phog-store-duckdb-walls-')
  writeFileSync(join(root, 'secret.csv'), 'a,b\n1,2\n')
  const db = await accessDuckDb(join(root, 'events.duckdb'), SETTINGS)
  try {
    const attempts = [
      `SELECT * FROM '${root}/secret.csv'`,
      `SELECT * FROM read_csv('${root}/secret.csv')`,
      `COPY (SELECT 1) TO '${root}/out.csv'`,
      `ATTACH '${root}/other.duckdb' AS other`,
      "SET memory_limit = '10GB'",
      'SET enable_external_access = true',
      'INSTALL httpfs',
    ]
    for (const sql of attempts) expect({ sql, ran: await db.all(sql).then(() => true, () => false) }).toEqual({ sql, ran: false })
    expect(await db.all('SELECT count(*) FROM events')).toEqual([[0]])
  } finally {
    await db.release()
  }
})
