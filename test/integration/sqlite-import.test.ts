// Moving an embedded install from SQLite to DuckDB: the first start with EMBEDDED_EVENT_STORE=duckdb copies
// DATA_DIR/events.sqlite into DuckDB in the background (src/events/sqlite-import.ts), resumably, each event once.
import { expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { accessDuckDb } from '../../src/events/duckdb-access'
import { EmbeddedEventStore } from '../../src/events/embedded'
import { SqliteEventsImport } from '../../src/events/sqlite-import'
import { createLogger } from '../../src/log'
import { freshDataDir, json, startStack } from '../helpers/stack'
import { tempDir } from '../helpers/temp'
import { event } from './event-store.contract'

const SETTINGS = { memoryMb: 128, threads: 1 }

async function sqliteWith(file: string, n: number) {
  const store = new EmbeddedEventStore(file)
  await store.init()
  const rows = Array.from({ length: n }, (_, i) => event({ teamId: 1 + (i % 2) }))
  await store.insertBatch(rows, { inDoubt: false })
  await store.close()
  return rows
}

function capturingLogger() {
  const lines: string[] = []
  const log = createLogger('info', { write: (line: string) => void lines.push(line) })
  return { log, lines }
}

test('resumed after a stop between a chunk and its progress: every event once, then marked finished and never again', async () => {
  const dir = tempDir('phog-import-')
  const rows = await sqliteWith(join(dir, 'events.sqlite'), 12_345)
  const duck = await accessDuckDb(join(dir, 'events.duckdb'), SETTINGS)
  try {
    const sqlite = new Database(join(dir, 'events.sqlite'))
    sqlite.run("INSERT INTO person_distinct_id VALUES (1, 'a', 'person-a', 7), (1, 'b', NULL, 9), (2, 'a', 'person-c', 3)")
    sqlite.close()
    // a copy that stopped after landing rows 1–3000 but saving progress only to rowid 1000
    await duck.insertEvents(rows.slice(0, 3000), false)
    await duck.write('INSERT INTO sqlite_import VALUES (?, 1000, 1000, NULL)', [join(dir, 'events.sqlite')])
    const { log, lines } = capturingLogger()
    const outcome = await new SqliteEventsImport(join(dir, 'events.sqlite'), duck, log, { chunk: 2500 }).start()
    expect(outcome.finished).toBe(true)
    const counts = await duck.all('SELECT count(*), count(DISTINCT uuid) FROM events')
    expect(counts).toEqual([[12_345, 12_345]])
    expect(await duck.all('SELECT team_id, distinct_id, person_id, version FROM person_distinct_id ORDER BY ALL')).toEqual([[1, 'a', 'person-a', 7], [1, 'b', null, 9], [2, 'a', 'person-c', 3]])
    expect(lines.join('')).toContain('copying 12345 events from SQLite into DuckDB')
    expect(lines.join('')).toContain('copied 12345 events from SQLite into DuckDB')
    // finished: a later start copies nothing
    const again = await new SqliteEventsImport(join(dir, 'events.sqlite'), duck, log).start()
    expect(again).toEqual({ copied: 0, finished: true })
    expect(await duck.all('SELECT count(*) FROM events')).toEqual([[12_345]])
  } finally {
    await duck.release()
  }
})

test('the first start on DuckDB answers queries over the events SQLite held', async () => {
  const dataDir = await freshDataDir('embedded')
  await sqliteWith(join(dataDir, 'events.sqlite'), 4000)
  const stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { DATA_DIR: dataDir, EMBEDDED_EVENT_STORE: 'duckdb', FLUSH_INTERVAL_MS: 20 })
  try {
    let results: unknown = null
    for (let i = 0; i < 100; i++) {
      results = (await json(stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } } }))).results
      if (JSON.stringify(results) === '[[2000]]') break
      await Bun.sleep(100)
    }
    expect(results).toEqual([[2000]]) // project 1's half
  } finally {
    await stack.close()
  }
})
