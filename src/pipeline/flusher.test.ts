import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { silentLogger } from '../log'
import type { Batch } from './consumer'
import { Flusher } from './flusher'
import { MetricsRecorder } from './metrics-relay'
import { SharedCounters } from './shared-counters'
import { WriteAheadLog } from './wal'
import { WalView } from './wal-view'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

describe('the flusher', () => {
  test('a store’s largest batch splits what the flush trigger lets wait, and every record is handled once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-flusher-'))
    dirs.push(dir)
    const wal = WriteAheadLog.open({ dir, segmentBytes: 1 << 20, fsyncIntervalMs: 50 })
    const counters = new SharedCounters()
    for (let i = 1; i <= 10; i++) {
      wal.append([new Uint8Array([i])])
      counters.published(wal.lastSeq, wal.activeExtent.firstSeq, wal.activeExtent.size, 2)
    }
    const view = new WalView(counters)
    view.update(wal.snapshot())
    const flusher = new Flusher(
      { walDir: dir, dlqDir: join(dir, 'dlq'), flushIntervalMs: 3_600_000, flushMaxEvents: 1_000_000, batchMaxEvents: 5, ringMaxEvents: 100, pollMs: 5 },
      {
        view,
        counters,
        log: silentLogger,
        metrics: new MetricsRecorder(),
        // two events a record
        replay: (record) => ({
          seq: record.seq,
          projectId: 1,
          receivedAt: 0,
          size: record.size,
          decodedSize: 1,
          dropped: new Map(),
          events: [0, 1].map((i) => ({ uuid: `u${record.seq}-${i}`, event: 'e', distinctId: 'd', properties: {}, timestamp: 0 })),
        }),
        onProgress: () => undefined,
      },
    )
    const batches: [number, number, number][] = []
    flusher.addConsumer({
      name: 'store',
      async handle(batch: Batch) {
        batches.push([batch.firstSeq, batch.lastSeq, batch.events])
      },
      probe: async () => true,
    })
    flusher.start()
    expect(await flusher.drain(Date.now() + 5000)).toBe(true)
    await wal.close()
    // a batch closes once it holds 5 events or more: 3 records of 2 events each
    expect(batches).toEqual([
      [1, 3, 6],
      [4, 6, 6],
      [7, 9, 6],
      [10, 10, 2],
    ])
  })
})
