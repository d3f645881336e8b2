// The log's group-commit writer: concurrent appends are written together, in the order they were handed over,
// each answered once its group is written (and synced); and the capture log counts records still waiting for
// their group against its cap and the projects' shares.
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { silentLogger } from '../log'
import { createMetrics } from '../ops/metrics'
import { CaptureLog } from './capture-log'
import { WalWriteError, WriteAheadLog, type WalRecord } from './wal'

const dirs: string[] = []
const closing: { close(): Promise<void> }[] = []
afterEach(async () => {
  for (const c of closing.splice(0)) await c.close()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'phog-wal-group-'))
  dirs.push(d)
  return d
}

function open(d: string, over: Partial<Parameters<typeof WriteAheadLog.open>[0]> = {}): WriteAheadLog {
  const wal = WriteAheadLog.open({ dir: d, segmentBytes: 1 << 20, fsyncIntervalMs: 0, spares: 1, ...over })
  closing.push(wal)
  return wal
}

const payload = (i: number, size = 100) => new TextEncoder().encode(`record-${i}-`.padEnd(size, '.'))
const text = (r: WalRecord) => new TextDecoder().decode(r.payload)

function readAll(wal: WriteAheadLog, from = 1): WalRecord[] {
  const reader = wal.reader(from)
  const out: WalRecord[] = []
  for (let r = reader.next(); r; r = reader.next()) out.push(r)
  reader.close()
  return out
}

describe('group commit', () => {
  for (const fsyncIntervalMs of [0, 50]) {
    test(`concurrent appends go in few groups, numbered in the order handed over, each resolved once written (fsync ${fsyncIntervalMs === 0 ? 'each group' : 'on an interval'})`, async () => {
      const wal = open(dir(), { fsyncIntervalMs })
      const seen: number[] = []
      const appends = Array.from({ length: 500 }, (_, i) => wal.write([payload(i)], (seq) => seen.push(seq)))
      // nothing is part of the log before its group is written
      expect(wal.lastSeq).toBe(0)
      const seqs = await Promise.all(appends)
      expect(seqs).toEqual(Array.from({ length: 500 }, (_, i) => i + 1))
      expect(seen).toEqual(seqs)
      expect(wal.groupStats.records).toBe(500)
      expect(wal.groupStats.groups).toBeLessThan(10)
      const records = readAll(wal)
      expect(records.map((r) => r.seq)).toEqual(seqs)
      expect(records.map(text)).toEqual(Array.from({ length: 500 }, (_, i) => new TextDecoder().decode(payload(i))))
    })
  }

  test('records handed over while a group is written form the next one; a group stops at the segment’s end and the next starts a new segment', async () => {
    const d = dir()
    const wal = open(d, { segmentBytes: 64 * 1024 })
    const first = Array.from({ length: 50 }, (_, i) => wal.write([payload(i, 1000)]))
    // handed over while the first group is in flight
    await Promise.resolve()
    await Promise.resolve()
    const second = Array.from({ length: 150 }, (_, i) => wal.write([payload(50 + i, 1000)]))
    const seqs = await Promise.all([...first, ...second])
    expect(seqs).toEqual(Array.from({ length: 200 }, (_, i) => i + 1))
    expect(wal.groupStats.groups).toBeGreaterThanOrEqual(4) // 200 KB in segments of 64 KB
    expect(wal.snapshot().length).toBeGreaterThanOrEqual(4)
    expect(wal.snapshot().every((s) => s.size <= 64 * 1024)).toBe(true)
    await wal.close()
    closing.splice(closing.indexOf(wal), 1)
    // and a restart reads back every record, in order
    const again = open(d, { segmentBytes: 64 * 1024 })
    expect(readAll(again).map(text)).toEqual(Array.from({ length: 200 }, (_, i) => new TextDecoder().decode(payload(i, 1000))))
  })

  test('settled() waits for what was handed over; close() writes it first; a closed log refuses', async () => {
    const d = dir()
    const wal = open(d)
    const appends = Array.from({ length: 20 }, (_, i) => wal.write([payload(i)]))
    await wal.settled()
    expect(wal.lastSeq).toBe(20)
    const late = Array.from({ length: 20 }, (_, i) => wal.write([payload(20 + i)]))
    await wal.close()
    closing.splice(closing.indexOf(wal), 1)
    expect(await Promise.all([...appends, ...late])).toHaveLength(40)
    expect(wal.write([payload(99)])).rejects.toBeInstanceOf(WalWriteError)
    expect(readAll(open(d)).length).toBe(40)
  })

  test('a synchronous append is refused while a group is in flight; an erasure waits for the group in flight', async () => {
    const wal = open(dir(), { segmentBytes: 64 * 1024 })
    const appends = Array.from({ length: 30 }, (_, i) => wal.write([payload(i, 1000)]))
    await Promise.resolve()
    expect(() => wal.append([payload(1)])).toThrow(WalWriteError)
    let forgotten = false
    const forgetting = wal.forgetLogged().then(() => (forgotten = true))
    expect(forgotten).toBe(false)
    await Promise.all(appends)
    await forgetting
    // the segment written so far was closed by the erasure: the next record starts a new one
    const before = wal.snapshot().length
    await wal.write([payload(31)])
    expect(wal.snapshot().length).toBe(before)
    expect(wal.snapshot().at(-1)!.firstSeq).toBe(31)
    // once idle, a synchronous append is taken again
    const sync = wal.append([payload(32)])
    expect(sync.seq).toBe(32)
    await sync.durable
  })
})

describe('the capture log and its writer', () => {
  function openLog(dataDir: string, maxWalBytes: number, projectShareBytes?: number): CaptureLog {
    const log = new CaptureLog(
      { dataDir, segmentBytes: 1 << 20, fsyncIntervalMs: 0, maxWalBytes, projectShareBytes, worker: { url: new URL('file:///never-started.ts'), data: {} }, consumers: ['store'] },
      { log: silentLogger, metrics: createMetrics() },
    )
    closing.push(log)
    return log
  }

  test('records waiting for their group count against the cap: a burst cannot pass it together', async () => {
    const log = openLog(dir(), 1 << 20)
    const record = [new Uint8Array(100 * 1024 - 16)] // 100 KiB a record with its frame
    const answers: Promise<unknown>[] = []
    let refused = 0
    for (let i = 0; i < 20; i++) {
      try {
        answers.push(log.accept(record, 1, 0, 1))
      } catch (error) {
        expect((error as { code: string }).code).toBe('capture_backlog_full')
        refused++
      }
    }
    // ten fit in 1 MiB, counted before any was written
    expect(refused).toBe(10)
    expect(log.backlogBytes()).toBe(10 * 100 * 1024)
    await Promise.all(answers)
    expect(log.backlogBytes()).toBe(10 * 100 * 1024)
    expect(log.wal.lastSeq).toBe(10)
  })

  test('and against the project’s share: 429 for the project past it, the others still taken', async () => {
    const log = openLog(dir(), 64 << 20, 300 * 1024)
    const record = [new Uint8Array(100 * 1024 - 16)]
    const statuses: number[] = []
    const answers: Promise<unknown>[] = []
    for (let i = 0; i < 6; i++) {
      try {
        answers.push(log.accept(record, 1, 0, 7))
        statuses.push(200)
      } catch (error) {
        statuses.push((error as { status: number }).status)
      }
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429])
    answers.push(log.accept(record, 1, 0, 8))
    await Promise.all(answers)
    expect(log.shares.bytesOf(7)).toBe(300 * 1024)
    expect(log.shares.bytesOf(8)).toBe(100 * 1024)
  })
})
