// The historical path on a real store (the embedded one, watched as it is called): events of other months are
// held, written grouped by month with a bounded number of months per insert, counted once, and never lost by a
// crash while they are held.
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EmbeddedEventStore } from '../events/embedded'
import type { EventStore, InsertOptions, StoredEvent } from '../events/store'
import { silentLogger } from '../log'
import { Flusher, type Progress } from './flusher'
import { HistoryWriter, isHistorical, monthOf } from './history-writer'
import { MetricsRecorder } from './metrics-relay'
import type { LoggedRecord } from './ring'
import { SharedCounters } from './shared-counters'
import { WriteAheadLog } from './wal'
import { WalView } from './wal-view'
import { storedEventOf } from './store-writer'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const RECEIVED = Date.UTC(2026, 10, 15)
const RECORDS = 40
/** Each record: one event now, and one in each of 60 months spread from 1970 on (2 records share each month). */
function replay(record: { seq: number; size: number }): LoggedRecord {
  const months = Array.from({ length: 60 }, (_, i) => Date.UTC(1970 + ((record.seq * 60 + i) % 1560) / 12, 0, 1) + ((record.seq * 60 + i) % 12) * 31 * 86_400_000)
  return {
    seq: record.seq,
    projectId: 1,
    receivedAt: RECEIVED,
    size: record.size,
    decodedSize: 1,
    dropped: new Map(),
    // the same uuids on every replay, as capture's derived uuids are
    events: [RECEIVED, ...months].map((timestamp, i) => ({ uuid: `${record.seq.toString(16).padStart(8, '0')}-0000-4000-8000-${i.toString(16).padStart(12, '0')}`, event: 'e', distinctId: 'd', properties: { i }, timestamp })),
  }
}

/** A real store whose inserts are watched: how many months each touched. */
class WatchedStore {
  readonly monthsPerInsert: number[] = []
  constructor(readonly inner: EmbeddedEventStore) {}
  asStore(): EventStore {
    const inner = this.inner
    return new Proxy(inner, {
      get: (target, key) => {
        if (key === 'insertBatch') {
          return (rows: StoredEvent[], options: InsertOptions) => {
            this.monthsPerInsert.push(new Set(rows.map((r) => monthOf(r.timestamp))).size)
            return target.insertBatch(rows, options)
          }
        }
        const value = Reflect.get(target, key)
        return typeof value === 'function' ? value.bind(target) : value
      },
    }) as EventStore
  }
}

function setUp(dir: string, holdMs: number) {
  const wal = WriteAheadLog.open({ dir, segmentBytes: 1 << 20, fsyncIntervalMs: 50 })
  const counters = new SharedCounters()
  const view = new WalView(counters)
  const publish = () => {
    counters.published(wal.lastSeq, wal.activeExtent.firstSeq, wal.activeExtent.size, 61)
    view.update(wal.snapshot())
  }
  let progress: Progress | null = null
  const metrics = new MetricsRecorder()
  const flusher = new Flusher(
    { walDir: dir, dlqDir: join(dir, 'dlq'), flushIntervalMs: 10, flushMaxEvents: 1_000_000, batchMaxEvents: 300, ringMaxEvents: 10_000, pollMs: 5 },
    { view, counters, log: silentLogger, metrics, replay, onProgress: (p) => (progress = p) },
  )
  return { wal, flusher, publish, metrics, progress: () => progress }
}

describe('the historical path', () => {
  test('rows of other months are held, then written a bounded number of months per insert, each once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-history-'))
    dirs.push(dir)
    const store = new EmbeddedEventStore(join(dir, 'events.sqlite'))
    await store.init()
    const watched = new WatchedStore(store)
    const { wal, flusher, publish, metrics, progress } = setUp(dir, 3_600_000)
    const writer = new HistoryWriter({ events: watched.asStore(), checkpoint: flusher.checkpoint, deadLetters: flusher.deadLetters, metrics, log: silentLogger, options: { holdMs: 3_600_000, monthsPerInsert: 12 } })
    flusher.addConsumer(writer)
    for (let i = 0; i < RECORDS; i++) wal.append([new Uint8Array([i])])
    publish()
    flusher.start()
    // everything handed over, nothing written yet: the durable position stays before the first held record
    for (let i = 0; i < 200 && writer.heldFrom() === null; i++) await Bun.sleep(10)
    await Bun.sleep(100)
    expect(watched.monthsPerInsert).toEqual([])
    expect(writer.heldFrom()).toBe(1)
    expect(progress()?.positions.store_history ?? 0).toBe(0)
    expect(flusher.checkpoint.done('store_history')).toBe(0)

    expect(await flusher.drain(Date.now() + 10_000)).toBe(true)
    await wal.close()
    // 40 records × 60 months over all 1,560 months of 1970–2099 (less the three around the time of receipt), at most
    // 12 months an insert: 130 inserts making one part a month, where an insert per batch made a part per month per batch
    const historical = Array.from({ length: RECORDS }, (_, i) => replay({ seq: i + 1, size: 1 })).flatMap((r) => r.events.filter((e) => isHistorical(r, e)))
    const months = new Set(historical.map((e) => monthOf(e.timestamp)))
    expect(months.size).toBe(1557)
    expect(Math.max(...watched.monthsPerInsert)).toBeLessThanOrEqual(12)
    expect(watched.monthsPerInsert.length).toBe(Math.ceil(1557 / 12))
    expect(watched.monthsPerInsert.reduce((a, b) => a + b, 0)).toBe(1557)
    const stored = await store.query({ teamId: 1, limit: 10_000 })
    expect(stored).toHaveLength(historical.length)
    expect(new Set(stored.map((r) => r.uuid)).size).toBe(historical.length)
    expect(stored.every((r) => monthOf(r.timestamp) !== monthOf(RECEIVED))).toBe(true)
    const deltas = metrics.take()!
    expect(deltas.counters.find(([name, labels]) => name === 'events' && labels?.outcome === 'accepted')?.[2]).toBe(historical.length)
    await store.close()
  })

  test('a crash while rows are held loses nothing: the next start replays their records and writes each once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-history-'))
    dirs.push(dir)
    const store = new EmbeddedEventStore(join(dir, 'events.sqlite'))
    await store.init()
    const first = setUp(dir, 3_600_000)
    const held = new HistoryWriter({ events: store, checkpoint: first.flusher.checkpoint, deadLetters: first.flusher.deadLetters, metrics: first.metrics, log: silentLogger, options: { holdMs: 3_600_000 } })
    first.flusher.addConsumer(held)
    for (let i = 0; i < 10; i++) first.wal.append([new Uint8Array([i])])
    first.publish()
    first.flusher.start()
    for (let i = 0; i < 200 && held.heldFrom() === null; i++) await Bun.sleep(10)
    // a half-written flush, then the crash: part of the rows landed, the cursor never moved
    const landed = [1, 2, 3].map((seq) => replay({ seq, size: 1 })).flatMap((r) => r.events.filter((e) => isHistorical(r, e)).map((e) => storedEventOf(r, e)))
    await store.insertBatch(landed, { inDoubt: false })
    first.flusher.checkpoint.update((s) => {
      s.attempting.store_history = 10
    })
    await first.flusher.close() // stops without writing what is held (what a SIGKILL leaves)
    expect(first.flusher.checkpoint.done('store_history')).toBe(0)
    await first.wal.close()

    const second = setUp(dir, 0)
    const writer = new HistoryWriter({ events: store, checkpoint: second.flusher.checkpoint, deadLetters: second.flusher.deadLetters, metrics: second.metrics, log: silentLogger, options: { holdMs: 0 } })
    second.flusher.addConsumer(writer)
    second.publish()
    second.flusher.start()
    expect(await second.flusher.drain(Date.now() + 10_000)).toBe(true)
    await second.wal.close()
    const expected = Array.from({ length: 10 }, (_, i) => replay({ seq: i + 1, size: 1 })).flatMap((r) => r.events.filter((e) => isHistorical(r, e)))
    const stored = await store.query({ teamId: 1, limit: 10_000 })
    expect(stored.map((r) => r.uuid).sort()).toEqual(expected.map((e) => e.uuid).sort())
    await store.close()
  })
})
