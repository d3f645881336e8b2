import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { encodeRecord, type CaptureRequest } from '../capture/record'
import { ProjectShares } from './project-shares'
import { WriteAheadLog } from './wal'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const request = (body: Uint8Array): CaptureRequest => ({
  method: 'POST',
  body,
  contentType: null,
  contentEncoding: null,
  query: new URLSearchParams(),
  ip: null,
  userAgent: null,
  engage: false,
  receivedAt: 0,
  seed: new Uint8Array(16),
})

describe('ProjectShares', () => {
  test('counts per project and shrinks as the consumers pass whole runs', () => {
    const shares = new ProjectShares()
    for (let seq = 1; seq <= 10_000; seq++) shares.add(seq, seq % 2 === 0 ? 1 : 2, 10)
    expect(shares.bytesOf(1)).toBe(50_000)
    expect(shares.bytesOf(2)).toBe(50_000)
    // runs of 4096 records: passing 5000 releases the first run only (conservative)
    shares.release(5000)
    expect(shares.bytesOf(1)).toBe(50_000 - 2048 * 10)
    shares.release(10_000)
    expect(shares.bytesOf(1)).toBe(0)
    expect(shares.summary()).toEqual({ projects: 0, largest: 0 })
  })

  test('what arrived between two progress reports is released once passed', () => {
    const shares = new ProjectShares()
    shares.add(1, 7, 100)
    shares.add(2, 7, 100)
    shares.release(1) // the consumers are at 1: records 1 and 2 now make one run, kept until 2 is passed
    expect(shares.bytesOf(7)).toBe(200)
    shares.add(3, 8, 50)
    shares.release(2)
    expect(shares.bytesOf(7)).toBe(0)
    expect(shares.bytesOf(8)).toBe(50)
  })

  test('a run ends at its byte bound: a consumer stopped inside a run of large records holds back one bound at most', () => {
    // a log of 2 MiB, runs of 8 KiB: 6 KB batches under a consumer that stalls mid-stream (ClickHouse going down)
    const shares = new ProjectShares(8192)
    for (let seq = 1; seq <= 300; seq++) shares.add(seq, 1, 6000)
    shares.release(120) // the stalled store consumer passed record 120 and no further
    const unfinished = 180 * 6000
    expect(shares.bytesOf(1)).toBeGreaterThanOrEqual(unfinished)
    expect(shares.bytesOf(1)).toBeLessThanOrEqual(unfinished + 8192 + 6000)
    // without the bound, the whole run (one progress report apart) stayed counted: 300 records
    const unbounded = new ProjectShares()
    for (let seq = 1; seq <= 300; seq++) unbounded.add(seq, 1, 6000)
    unbounded.release(120)
    expect(unbounded.bytesOf(1)).toBe(300 * 6000)
  })

  test('after a restart, what the log still holds counts again: a gzip body by the size it decodes to', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-shares-'))
    dirs.push(dir)
    const wal = WriteAheadLog.open({ dir, segmentBytes: 64 * 1024, fsyncIntervalMs: 50, spares: 1 })
    const gzip = gzipSync('x'.repeat(200_000))
    for (let i = 0; i < 3; i++) wal.append(encodeRecord(5, request(gzip)))
    wal.append(encodeRecord(6, request(new TextEncoder().encode('{"event":"e"}'))))
    const shares = new ProjectShares()
    shares.recover(wal.reader(2))
    expect(shares.bytesOf(5)).toBe(2 * 200_000)
    expect(shares.bytesOf(6)).toBeGreaterThan(0)
    await wal.close()
  })
})
