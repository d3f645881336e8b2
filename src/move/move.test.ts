// The move's pure parts: when the source's log counts as drained (what the move refuses without), and the order in
// which tables are copied (parents before the tables that reference them).
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Checkpoint } from '../pipeline/checkpoint'
import { WriteAheadLog } from '../pipeline/wal'
import { parentsFirst, type TableShape } from './metadata'
import { unfinishedLogRecords } from './source'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

async function dataDirWithLog(records: number, done: Record<string, number>): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'phog-move-'))
  dirs.push(dataDir)
  const wal = WriteAheadLog.open({ dir: join(dataDir, 'wal'), segmentBytes: 65536, fsyncIntervalMs: 0 })
  for (let i = 0; i < records; i++) await wal.append([new TextEncoder().encode(`record-${i}`)]).durable
  await wal.close()
  const checkpoint = new Checkpoint(join(dataDir, 'wal', 'checkpoint'))
  checkpoint.update((state) => Object.assign(state.done, done))
  checkpoint.close()
  return dataDir
}

describe('unfinishedLogRecords', () => {
  test('no log, or every consumer past the last record: drained', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'phog-move-'))
    dirs.push(empty)
    expect(unfinishedLogRecords(empty, 65536)).toBe(0)
    expect(unfinishedLogRecords(await dataDirWithLog(5, { store: 5, learn: 5, recordings: 5 }), 65536)).toBe(0)
  })

  test('a consumer behind, one never named, or one the list does not know (named by the checkpoint): records left', async () => {
    expect(unfinishedLogRecords(await dataDirWithLog(5, { store: 5, learn: 3, recordings: 5 }), 65536)).toBe(2)
    expect(unfinishedLogRecords(await dataDirWithLog(5, { store: 5, learn: 5 }), 65536)).toBe(5)
    expect(unfinishedLogRecords(await dataDirWithLog(5, { store: 5, learn: 5, recordings: 5, errors: 4 }), 65536)).toBe(1)
  })
})

test('parentsFirst: referenced tables before their children; a table referencing itself or a cycle does not loop', () => {
  const shape = (name: string, parents: string[]): TableShape => ({ name, parents, primaryKey: ['id'], columns: ['id'], projectColumn: null })
  const order = parentsFirst([
    shape('dashboard_tiles', ['dashboards', 'insights']),
    shape('insights', ['projects', 'users']),
    shape('users', ['projects']),
    shape('projects', ['organizations']),
    shape('organizations', []),
    shape('dashboards', ['projects']),
    shape('a', ['b']),
    shape('b', ['a']),
  ]).map((s) => s.name)
  const before = (x: string, y: string) => expect(order.indexOf(x)).toBeLessThan(order.indexOf(y))
  before('organizations', 'projects')
  before('projects', 'users')
  before('users', 'insights')
  before('insights', 'dashboard_tiles')
  before('dashboards', 'dashboard_tiles')
  expect(order).toHaveLength(8)
})
