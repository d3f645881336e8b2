// What DATA_DIR leaves to other local users: nothing. The directory is 0700 and every file 0600 (the embedded
// Postgres, the SQLite event store, the write-ahead log), existing ones are tightened at boot with a warning; and a
// capture authenticated with a personal key never writes the key to disk.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { BASE, freshDataDir, json, PERSONAL_KEY, startStack, type Stack } from '../helpers/stack'

/** Every entry under dir (links not followed), with its mode. */
function walk(dir: string, out: { path: string; mode: number; file: boolean }[] = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    const stat = lstatSync(path)
    if (stat.isSymbolicLink()) continue
    out.push({ path, mode: stat.mode & 0o777, file: stat.isFile() })
    if (stat.isDirectory()) walk(path, out)
  }
  return out
}

describe('DATA_DIR on the embedded stores', () => {
  let stack: Stack
  let dataDir: string
  beforeAll(async () => {
    dataDir = await freshDataDir('embedded')
    // what an older version left: an open directory, a world-readable file
    chmodSync(dataDir, 0o755)
    writeFileSync(join(dataDir, 'left-open.txt'), 'x', { mode: 0o644 })
    chmodSync(join(dataDir, 'left-open.txt'), 0o644)
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', DATA_DIR: dataDir, FLUSH_INTERVAL_MS: 50 })
  })
  afterAll(() => stack?.close())

  test('a personal-key capture (JSON, gzip, query string) is stored, and the key is in no file', async () => {
    const body = JSON.stringify({ api_key: PERSONAL_KEY, project_id: 1, event: 'pk-secret', distinct_id: 'pk-disk' })
    const answers = await Promise.all([
      stack.app.handle(new Request(`${BASE}/capture/`, { method: 'POST', body })),
      stack.app.handle(new Request(`${BASE}/capture/`, { method: 'POST', body: gzipSync(body), headers: { 'content-encoding': 'gzip' } })),
      stack.app.handle(new Request(`${BASE}/capture/?api_key=${PERSONAL_KEY}`, { method: 'POST', body: JSON.stringify({ project_id: 1, event: 'pk-secret', distinct_id: 'pk-disk' }) })),
    ])
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200])
    let stored: unknown[] = []
    for (let i = 0; i < 200 && stored.length < 3; i++) {
      stored = (await json(stack.api('/api/projects/1/events/?distinct_id=pk-disk'))).results
      await Bun.sleep(50)
    }
    expect(stored.length).toBe(3)
    const withKey = walk(dataDir).filter((e) => e.file && readFileSync(e.path).includes(PERSONAL_KEY))
    expect(withKey.map((e) => e.path)).toEqual([])
  })

  test('the directory is 0700, every file and directory under it private to this user (old ones tightened)', () => {
    expect(lstatSync(dataDir).mode & 0o777).toBe(0o700)
    const open = walk(dataDir).filter((e) => (e.mode & 0o077) !== 0)
    expect(open.map((e) => `${e.path} ${e.mode.toString(8)}`)).toEqual([])
    expect(walk(dataDir).some((e) => e.path.endsWith('events.sqlite'))).toBe(true)
  })
})
