// The recordings writer's exact session cap, on the embedded store: what the store holds counts, across writers
// (a restarted process), and a block past the cap is dropped and counted.
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CaptureRequest } from '../capture/record'
import { silentLogger } from '../log'
import { MetricsRecorder } from '../pipeline/metrics-relay'
import type { Batch } from '../pipeline/consumer'
import { SqliteRecordingStore } from './sqlite-store'
import type { BlockWrite } from './store'
import { MAX_CLOCK_AHEAD_MS } from './metadata'
import { blocksOfRequest, RecordingWriter } from './writer'

const T0 = Date.now() - 60_000
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function request(sessionId: string, n: number): CaptureRequest {
  const body = JSON.stringify([
    { event: '$snapshot', properties: { $session_id: sessionId, $window_id: 'w', distinct_id: 'd', $snapshot_data: [{ type: 3, data: { source: 5, text: 'x'.repeat(500), id: 1 }, timestamp: T0 + n }] } },
  ])
  return { method: 'POST', body: new TextEncoder().encode(body), contentType: 'application/json', contentEncoding: null, query: new URLSearchParams(), ip: null, userAgent: null, engage: false, receivedAt: T0, seed: new Uint8Array(16) }
}

function batch(seqs: [number, string][]): Batch {
  const records = seqs.map(([seq, session]) => ({ seq, projectId: 1, receivedAt: T0, events: [], dropped: new Map(), size: 1, decodedSize: 1, recording: request(session, seq) }))
  return { records, firstSeq: seqs[0][0], lastSeq: seqs.at(-1)![0], events: 0, items: 0, bytes: 0 }
}

async function openStore() {
  const dir = mkdtempSync(join(tmpdir(), 'phog-writer-'))
  dirs.push(dir)
  const store = new SqliteRecordingStore(join(dir, 'recordings.sqlite'))
  await store.init()
  return store
}

describe('the recordings writer and RECORDING_MAX_SESSION_BYTES', () => {
  test('blocks past the cap are dropped and counted; other sessions are written; a new writer reads what is stored', async () => {
    const store = await openStore()
    const blockSize = blocksOfRequest(1, 1, request('s', 1), 1 << 20)[0].block.summary.size
    const cap = blockSize * 2 + 10
    const metrics = new MetricsRecorder()
    const writer = new RecordingWriter({ recordings: store, maxBodyBytes: 1 << 20, metrics, log: silentLogger, maxSessionBytes: cap })
    await writer.handle(batch([[1, 's'], [2, 's'], [3, 's'], [4, 'other']]))
    expect((await store.get(1, 's'))!.size).toBe(blockSize * 2)
    expect((await store.get(1, 's'))!.blockCount).toBe(2)
    expect((await store.get(1, 'other'))!.blockCount).toBe(1)
    expect(metrics.take()!.counters).toEqual([['recordingBytesRefused', { reason: 'session_bytes' }, blockSize]])

    // a restarted process: its writer knows nothing, the store says how much the session holds
    const restarted = new RecordingWriter({ recordings: store, maxBodyBytes: 1 << 20, metrics, log: silentLogger, maxSessionBytes: cap })
    await restarted.handle(batch([[5, 's'], [6, 'other']]))
    expect((await store.get(1, 's'))!.blockCount).toBe(2)
    expect((await store.get(1, 'other'))!.blockCount).toBe(2)
    expect(metrics.take()!.counters).toEqual([['recordingBytesRefused', { reason: 'session_bytes' }, blockSize]])
    await store.close()
  })

  test('0 is no cap', async () => {
    const store = await openStore()
    const writer = new RecordingWriter({ recordings: store, maxBodyBytes: 1 << 20, metrics: new MetricsRecorder(), log: silentLogger, maxSessionBytes: 0 })
    await writer.handle(batch(Array.from({ length: 20 }, (_, i) => [i + 1, 's'] as [number, string])))
    expect((await store.get(1, 's'))!.blockCount).toBe(20)
    await store.close()
  })

  test('a $snapshot without rrweb events is no block (a million empty ones made a million sources)', () => {
    const body = JSON.stringify([
      { event: '$snapshot', properties: { $session_id: 'empty', $snapshot_data: [] } },
      { event: '$snapshot', properties: { $session_id: 'empty', $window_id: 'w2', $snapshot_data: [1, 'x', null] } },
      { event: '$snapshot', properties: { $session_id: 'full', $snapshot_data: [{ type: 3, timestamp: T0 }] } },
    ])
    const writes = blocksOfRequest(7, 1, { ...request('x', 0), body: new TextEncoder().encode(body) }, 1 << 20)
    expect(writes.map((w) => w.block.sessionId)).toEqual(['full'])
  })

  test('a block the store refuses while it answers is dropped after the retries; the rest of the batch is written', async () => {
    const store = await openStore()
    let down = false
    // the real store, refusing one session's blocks as ClickHouse refuses a row it cannot parse
    const refusing = Object.assign(Object.create(store) as SqliteRecordingStore, {
      async write(writes: BlockWrite[]) {
        if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' })
        if (writes.some((w) => w.block.sessionId === 'poison')) throw new Error('Code: 27, e.displayText() = DB::Exception: Cannot parse input')
        return store.write(writes)
      },
      health: async () => !down,
    })
    const metrics = new MetricsRecorder()
    // room for two blocks a session: each failed attempt counting its blocks again would leave room for none
    const cap = blocksOfRequest(1, 1, request('s', 1), 1 << 20)[0].block.summary.size * 2 + 10
    const writer = new RecordingWriter({ recordings: refusing, maxBodyBytes: 1 << 20, metrics, log: silentLogger, maxSessionBytes: cap, isolateAfterFailures: 3 })
    const poisoned = batch([[1, 'before'], [2, 'poison'], [3, 'after']])
    // retried whole first (a refusal may be passing), nothing written
    for (let i = 0; i < 2; i++) await expect(writer.handle(poisoned)).rejects.toThrow('Cannot parse input')
    expect(await store.get(1, 'before')).toBeNull()
    // an outage is never isolated, however long it lasts
    down = true
    for (let i = 0; i < 5; i++) await expect(writer.handle(poisoned)).rejects.toThrow('ECONNREFUSED')
    down = false
    await writer.handle(poisoned)
    expect((await store.get(1, 'before'))!.blockCount).toBe(1)
    expect((await store.get(1, 'after'))!.blockCount).toBe(1)
    expect(await store.get(1, 'poison')).toBeNull()
    expect(metrics.take()!.counters).toEqual([['deadLettered', { consumer: 'recordings', reason: 'recording_refused_by_store' }, 1]])
    // the next batch goes in whole, and the failed attempts did not count against the session cap
    await writer.handle(batch([[4, 'before']]))
    expect((await store.get(1, 'before'))!.blockCount).toBe(2)
    await store.close()
  })

  test('a block is timed at most a day past its receipt (retention would never remove one timed in 2099)', () => {
    const body = JSON.stringify([{ event: '$snapshot', properties: { $session_id: 'future', $snapshot_data: [{ type: 3, timestamp: T0 + 1000 }, { type: 3, timestamp: Date.UTC(2099, 0, 1) }] } }])
    const [w] = blocksOfRequest(8, 1, { ...request('x', 0), body: new TextEncoder().encode(body) }, 1 << 20)
    expect([w.block.summary.firstTimestamp, w.block.summary.lastTimestamp]).toEqual([T0 + 1000, T0 + MAX_CLOCK_AHEAD_MS])
    // the events themselves are kept as sent
    expect(w.block.lines).toContain(String(Date.UTC(2099, 0, 1)))
  })
})
