// The embedded DuckDB database (DuckDbDatabase.open) reads no file
// or URL from SQL and keeps the settings it opened with, whatever a statement says. The query compiler refuses all of
// this already; these settings are the second wall if a statement ever gets past it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { DuckDbDatabase } from '../../src/events/duckdb-database'
import { tempDir } from '../helpers/temp'

let db: DuckDbDatabase
beforeAll(async () => {
  db = await DuckDbDatabase.open(join(tempDir('phog-duckdb-settings-'), 'events.duckdb'), { memoryMb: 128, threads: 1 })
})
afterAll(() => db?.close())

const refused = async (sql: string) => {
  const error = await db.all(sql).then(() => null, (e: Error) => e.message)
  console.log(`${sql} → ${error === null ? 'ran' : error.split('\n')[0]}`)
  return error !== null
}

test('files and URLs cannot be read or written from SQL (enable_external_access = false)', async () => {
  expect(await refused("SELECT count(*) FROM read_csv('/etc/passwd')")).toBe(true)
  expect(await refused("SELECT count(*) FROM '/etc/passwd'")).toBe(true)
  expect(await refused("COPY (SELECT 1) TO '/tmp/phog-duckdb-escape.csv'")).toBe(true)
  expect(await refused("ATTACH '/tmp/phog-duckdb-other.duckdb' AS other")).toBe(true)
})

test('the configuration is locked (memory_limit cannot be raised), spill is bounded, no community extensions', async () => {
  expect(await refused("SET memory_limit = '10GB'")).toBe(true)
  const [[spill, community]] = await db.all("SELECT current_setting('max_temp_directory_size'), current_setting('allow_community_extensions')")
  console.log(`max_temp_directory_size ${spill}, allow_community_extensions ${community}`)
  expect(String(spill)).not.toContain('available disk space')
  expect(community).toBe(false)
})
