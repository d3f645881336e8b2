import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { encodeRecord, type CaptureRequest } from '../capture/record'
import { Backlog, BacklogRecovery, MAX_RUNS, readSavedBacklog, saveBacklog, saveBacklogNow, type BacklogRun } from './backlog'
import { WriteAheadLog, type WalRecord } from './wal'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'phog-backlog-'))
  dirs.push(dir)
  return dir
}

const request = (body: Uint8Array, contentEncoding: string | null = null): CaptureRequest => ({
  method: 'POST',
  body,
  contentType: 'application/json',
  contentEncoding,
  query: new URLSearchParams(),
  ip: null,
  userAgent: null,
  engage: false,
  receivedAt: 0,
  seed: new Uint8Array(16),
})

/** a logged batch of `n` events, gzipped every other time */
const batch = (n: number, gzip: boolean): Uint8Array[] => {
  const text = JSON.stringify({ api_key: 'phc_x', batch: Array.from({ length: n }, (_, i) => ({ event: 'e', properties: { distinct_id: `d${i}` } })) })
  return encodeRecord(1, gzip ? request(gzipSync(text), 'gzip') : request(new TextEncoder().encode(text)))
}

describe('Backlog', () => {
  test('released by the slowest position, and exactly 0 once every consumer has passed the last record', () => {
    const backlog = new Backlog()
    for (let seq = 1; seq <= 10; seq++) backlog.add(seq, 100, 1000, 50)
    expect({ bytes: backlog.bytes, items: backlog.items }).toEqual({ bytes: 10_000, items: 500 })
    // one report: what arrived is one run, held whole until passed
    backlog.release(4)
    expect({ bytes: backlog.bytes, items: backlog.items }).toEqual({ bytes: 10_000, items: 500 })
    for (let seq = 11; seq <= 20; seq++) backlog.add(seq, 100, 1000, 50)
    backlog.release(10)
    expect({ bytes: backlog.bytes, items: backlog.items }).toEqual({ bytes: 10_000, items: 500 })
    backlog.release(20)
    expect({ bytes: backlog.bytes, items: backlog.items }).toEqual({ bytes: 0, items: 0 })
    expect(backlog.waiting()).toEqual([])
  })

  test('consumers restarted at different checkpoints: nothing stays counted once the slowest has caught up', () => {
    // the shape that left megabytes "unflushed" on an idle log: the learner's checkpoint ahead of the store's
    const backlog = new Backlog()
    for (let seq = 1; seq <= 300; seq++) backlog.add(seq, 15_000, 15_000, 500)
    const positions = { store: 0, learn: 300 }
    for (let store = 50; store <= 300; store += 50) {
      positions.store = store
      backlog.release(Math.min(positions.store, positions.learn))
      expect(backlog.items).toBeGreaterThanOrEqual((300 - store) * 500)
    }
    expect({ bytes: backlog.bytes, items: backlog.items }).toEqual({ bytes: 0, items: 0 })
  })

  test('a run is closed at its byte bound: the count lags the slowest consumer by one run at most', () => {
    const backlog = new Backlog(8192)
    for (let seq = 1; seq <= 300; seq++) backlog.add(seq, 6000, 6000, 1)
    backlog.release(120)
    expect(backlog.bytes).toBeGreaterThanOrEqual(180 * 6000)
    expect(backlog.bytes).toBeLessThanOrEqual(180 * 6000 + 8192 + 6000)
  })

  test('a report per record for a long time: the runs stay bounded, and release to 0', () => {
    for (const runBytes of [Number.POSITIVE_INFINITY, 64 * 1024]) {
      const backlog = new Backlog(runBytes)
      // the store consumer reports after every record while the learner stays at 0
      for (let seq = 1; seq <= 20_000; seq++) {
        backlog.add(seq, 100, 100, 2)
        backlog.release(0)
        expect(backlog.waiting().length).toBeLessThanOrEqual(MAX_RUNS)
      }
      expect(backlog.items).toBe(40_000)
      backlog.release(10_000)
      expect(backlog.items).toBeGreaterThanOrEqual(20_000)
      expect(backlog.items).toBeLessThan(40_000)
      backlog.release(20_000)
      expect({ bytes: backlog.bytes, items: backlog.items }).toEqual({ bytes: 0, items: 0 })
    }
  })
})

describe('the saved tally', () => {
  test('written and read back; anything malformed, unordered or overlapping is not trusted', async () => {
    const dir = tempDir()
    const runs: BacklogRun[] = [
      { firstSeq: 3, lastSeq: 5, disk: 300, bytes: 900, items: 30 },
      { firstSeq: 6, lastSeq: 6, disk: 100, bytes: 100, items: 1 },
    ]
    await saveBacklog(join(dir, 'backlog'), runs)
    expect(readSavedBacklog(join(dir, 'backlog'))).toEqual(runs)
    saveBacklogNow(join(dir, 'backlog'), [])
    expect(readSavedBacklog(join(dir, 'backlog'))).toEqual([])
    expect(readSavedBacklog(join(dir, 'none'))).toEqual([])
    for (const text of ['{', '{"runs": 1}', '{"runs": [[1, 2, 3]]}', '{"runs": [[1, 2, 3, 4, -5]]}', '{"runs": [[5, 6, 1, 1, 1], [6, 7, 1, 1, 1]]}', '{"runs": [[5, 4, 1, 1, 1]]}']) {
      writeFileSync(join(dir, 'backlog'), text)
      expect({ text, runs: readSavedBacklog(join(dir, 'backlog')) }).toEqual({ text, runs: [] })
    }
  })
})

describe('BacklogRecovery', () => {
  /** a log of 12 batches of 10 events (record i has seq i), as the process that wrote it counted it */
  const written = () => {
    const wal = WriteAheadLog.open({ dir: tempDir(), segmentBytes: 16 * 1024, fsyncIntervalMs: 50, spares: 0 })
    const before = new Backlog()
    for (let i = 1; i <= 12; i++) {
      const appended = wal.append(batch(10, i % 2 === 0))
      before.add(appended.seq, appended.size, appended.size, 10)
      if (i % 4 === 0) before.release(0) // a progress report: runs of 4 records
    }
    return { wal, saved: before.waiting() }
  }

  const recover = (wal: WriteAheadLog, saved: BacklogRun[], from: number) => {
    const backlog = new Backlog()
    const decoded: number[] = []
    const itemsOf = (record: WalRecord) => {
      decoded.push(record.seq)
      return 10
    }
    const recovery = new BacklogRecovery(backlog, saved, from, itemsOf)
    const reader = wal.reader(from)
    for (let record = reader.next(); record; record = reader.next()) recovery.record(record, record.size)
    reader.close()
    recovery.finish()
    return { backlog, decoded }
  }

  test('the runs the slowest consumer had not started are taken as saved; the one it was inside is decoded', async () => {
    const { wal, saved } = written()
    expect(saved.map((r) => [r.firstSeq, r.lastSeq])).toEqual([[1, 4], [5, 8], [9, 12]])
    const { backlog, decoded } = recover(wal, saved, 3)
    expect(backlog.items).toBe(100)
    expect(decoded).toEqual([3, 4])
    // and it releases by position like any other count
    backlog.release(8)
    expect(backlog.items).toBe(40)
    backlog.release(12)
    expect(backlog.items).toBe(0)
    await wal.close()
  })

  test('no tally (a first start, or it was lost): every record waiting is decoded and counted', async () => {
    const { wal } = written()
    const { backlog, decoded } = recover(wal, [], 1)
    expect(backlog.items).toBe(120)
    expect(decoded.length).toBe(12)
    await wal.close()
  })

  test('records after the tally (accepted in its last second before a crash) are decoded', async () => {
    const { wal, saved } = written()
    const { backlog, decoded } = recover(wal, saved.slice(0, 2), 1)
    expect(backlog.items).toBe(120)
    expect(decoded).toEqual([9, 10, 11, 12])
    await wal.close()
  })

  test('a saved run that does not match the log (other sizes, or past its end) is decoded, not believed', async () => {
    const { wal, saved } = written()
    const lying = saved.map((r, i) => (i === 1 ? { ...r, items: 9999, disk: r.disk + 1 } : i === 2 ? { ...r, lastSeq: 20, items: 9999 } : r))
    const { backlog, decoded } = recover(wal, lying, 1)
    expect(backlog.items).toBe(120)
    expect(decoded).toEqual([5, 6, 7, 8, 9, 10, 11, 12])
    await wal.close()
  })
})
