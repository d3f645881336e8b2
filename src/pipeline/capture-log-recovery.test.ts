// After a restart the log's records still count against their projects' shares until every consumer has finished
// them. A consumer that never finished anything (its store down since the log began) is absent from the
// checkpoint: it once let another consumer's place decide, the project's count started at 0 and the project, at its
// share before the restart, was let in again (seen with ClickHouse down, the history path ahead of the store path).
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { gzipSync } from 'node:zlib'
import { join } from 'node:path'
import { encodeRecord } from '../capture/record'
import { silentLogger } from '../log'
import { createMetrics } from '../ops/metrics'
import { CaptureLog } from './capture-log'
import { Checkpoint } from './checkpoint'

const MiB = 1024 * 1024
const CONSUMERS = ['store', 'learn', 'store_history']
const DECODED = 500_000
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function openLog(dataDir: string): CaptureLog {
  return new CaptureLog(
    {
      dataDir,
      segmentBytes: MiB,
      fsyncIntervalMs: 0,
      maxWalBytes: 8 * MiB,
      projectShareBytes: 2 * MiB,
      // never started here: only what the constructor recovers is looked at
      worker: { url: new URL('file:///never-started.ts'), data: {} },
      consumers: CONSUMERS,
    },
    { log: silentLogger, metrics: createMetrics() },
  )
}

async function logThree(dataDir: string, log = openLog(dataDir)): Promise<void> {
  // gzip, as a client sends it: after a restart a record weighs what its gzip trailer says it decodes to
  const json = JSON.stringify({ api_key: 'k', event: 'e', distinct_id: 'd', properties: { text: 'x'.repeat(DECODED - 70) } })
  expect(json.length).toBe(DECODED)
  const body = gzipSync(json)
  const request = { method: 'POST', body, contentType: 'application/json', contentEncoding: 'gzip', query: new URLSearchParams(), ip: null, userAgent: null, engage: false, receivedAt: Date.now(), seed: new Uint8Array(16) }
  for (let i = 0; i < 3; i++) await log.accept(encodeRecord(1, request), 1, DECODED, 1)
  expect(log.shares.bytesOf(1)).toBe(1_500_000)
  await log.close()
}

function finished(dataDir: string, done: Record<string, number>): void {
  const checkpoint = new Checkpoint(join(dataDir, 'wal', 'checkpoint'))
  checkpoint.update((state) => Object.assign(state.done, done))
}

describe("a restarted log's project shares", () => {
  test('a consumer the checkpoint does not name has finished nothing: every record still counts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'phog-log-recovery-'))
    dirs.push(dataDir)
    await logThree(dataDir)
    finished(dataDir, { store_history: 3 })
    const log = openLog(dataDir)
    try {
      expect(log.shares.bytesOf(1)).toBe(1_500_000)
      expect(log.backlogBytes()).toBeGreaterThanOrEqual(1_500_000)
    } finally {
      await log.close()
    }
  })

  test('counted from the slowest consumer the checkpoint names', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'phog-log-recovery-'))
    dirs.push(dataDir)
    await logThree(dataDir)
    finished(dataDir, { store: 2, learn: 3, store_history: 3 })
    const log = openLog(dataDir)
    try {
      expect(log.shares.bytesOf(1)).toBe(500_000)
    } finally {
      await log.close()
    }
  })

  test('once every consumer has finished them, nothing counts', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'phog-log-recovery-'))
    dirs.push(dataDir)
    await logThree(dataDir)
    finished(dataDir, { store: 3, learn: 3, store_history: 3 })
    const log = openLog(dataDir)
    try {
      expect(log.shares.bytesOf(1)).toBe(0)
    } finally {
      await log.close()
    }
  })

  test("a log emptied under the checkpoint starts after the consumer furthest ahead (none skips what comes)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'phog-log-recovery-'))
    dirs.push(dataDir)
    await logThree(dataDir)
    finished(dataDir, { store: 2, learn: 3, store_history: 3 })
    // the segments moved away, the checkpoint kept
    for (const name of readdirSync(join(dataDir, 'wal'))) if (name !== 'checkpoint') rmSync(join(dataDir, 'wal', name))
    const log = openLog(dataDir)
    try {
      expect(log.shares.bytesOf(1)).toBe(0)
      await logThree(dataDir, log)
      expect(log.wal.lastSeq).toBe(6)
    } finally {
      await log.close()
    }
  })
})
