// The outage an operator reads: a consumer whose store refuses connections logs the start (store, reason),
// a summary per interval (attempts, backlog, age of the oldest record), the end (how long) and the drain
// (how much); the failure metric says `unreachable`; a data rejection is not called an outage.
import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createLogger } from '../log'
import { StoreError } from '../events/store'
import { Checkpoint } from './checkpoint'
import { Consumer, type Batch, type BatchHandler } from './consumer'
import { Ring } from './ring'

type Line = Record<string, unknown> & { msg: string; level: string }

function capture(): { lines: Line[]; log: ReturnType<typeof createLogger> } {
  const lines: Line[] = []
  const log = createLogger('info', { write: (s: string) => void lines.push(JSON.parse(s)) })
  return { lines, log }
}

const refused = () => new StoreError('clickhouse insert: connect ECONNREFUSED 127.0.0.1:8123', true, Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' }))

function setup(n: number, handler: BatchHandler, summaryMs: number) {
  const dir = mkdtempSync(join(tmpdir(), 'phog-outage-'))
  const checkpoint = new Checkpoint(join(dir, 'checkpoint'))
  const ring = new Ring(1000)
  const receivedAt = Date.now() - 5000
  for (let seq = 1; seq <= n; seq++) {
    ring.push({ seq, projectId: 1, receivedAt, size: 1, decodedSize: 1, dropped: new Map(), events: [{ uuid: `u${seq}`, event: 'e', distinctId: 'd', properties: {}, timestamp: 0 }] })
  }
  const { lines, log } = capture()
  const failures: string[] = []
  const consumer = new Consumer(
    {
      wal: { lastSeq: n, firstSeq: 1, locate: () => null, validBytes: () => 0 },
      ring,
      checkpoint,
      replay: () => {
        throw new Error('not in the ring')
      },
      maxEvents: 2,
      intervalMs: 5,
      log,
      poison: () => undefined,
      onProgress: () => undefined,
      onFailure: (_consumer, reason) => failures.push(reason),
      waitingEvents: (consumed) => n - consumed,
      outageSummaryMs: summaryMs,
    },
    handler,
  )
  return {
    consumer,
    lines,
    failures,
    cleanup: async () => {
      await consumer.stop()
      checkpoint.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

const outageLines = (lines: Line[]) => lines.filter((l) => typeof l.outage === 'string')

describe('an outage in the log', () => {
  test('start, summaries while it lasts, end, drain; reason `unreachable`', async () => {
    let down = true
    const handled: number[] = []
    const handler: BatchHandler = {
      name: 'store',
      store: 'clickhouse',
      async handle(batch: Batch) {
        if (down) throw refused()
        handled.push(batch.firstSeq)
      },
      probe: async () => !down,
      rejects: (e) => e instanceof StoreError && !e.transient,
    }
    const t = setup(6, handler, 150)
    try {
      t.consumer.start()
      // bounded: wait for two summaries (the backoff grows from 100 ms; a summary comes every 150 ms)
      for (let i = 0; i < 200 && outageLines(t.lines).filter((l) => l.outage === 'ongoing').length < 2; i++) await Bun.sleep(25)
      expect(t.consumer.failing).toStartWith('clickhouse unreachable: clickhouse insert: connect ECONNREFUSED')
      down = false
      expect(await t.consumer.catchUp(Date.now() + 30_000)).toBe(true)
      const lines = outageLines(t.lines)
      const started = lines.filter((l) => l.outage === 'started')
      const ongoing = lines.filter((l) => l.outage === 'ongoing')
      const ended = lines.filter((l) => l.outage === 'ended')
      const drained = lines.filter((l) => l.outage === 'drained')
      expect(started.length).toBe(1)
      expect(started[0]).toMatchObject({ level: 'warn', consumer: 'store', store: 'clickhouse', reason: 'unreachable', backlogRecords: 6, backlogEvents: 6 })
      expect((started[0].err as { cause: { code: string } }).cause.code).toBe('ECONNREFUSED')
      expect(started[0].msg).toContain('clickhouse outage started (unreachable)')
      expect(ongoing.length).toBeGreaterThanOrEqual(2)
      expect(ongoing[0]).toMatchObject({ level: 'warn', store: 'clickhouse', reason: 'unreachable', backlogRecords: 6 })
      expect(ongoing[0].attempts as number).toBeGreaterThanOrEqual(1)
      expect(ongoing[0].oldestRecordAgeSeconds as number).toBeGreaterThanOrEqual(5)
      expect(typeof ongoing[0].lastError).toBe('string')
      expect(ended.length).toBe(1)
      expect(ended[0]).toMatchObject({ level: 'info', store: 'clickhouse', reason: 'unreachable' })
      expect(ended[0].attempts as number).toBeGreaterThanOrEqual(2)
      expect(typeof ended[0].downSeconds).toBe('number')
      expect(drained.length).toBe(1)
      expect(drained[0]).toMatchObject({ store: 'clickhouse', drainedRecords: 6, drainedEvents: 6 })
      // in order, and nothing after the drain
      expect(lines.map((l) => l.outage).filter((o, i, a) => a[i - 1] !== o)).toEqual(['started', 'ongoing', 'ended', 'drained'])
      expect(t.failures.length).toBeGreaterThan(0)
      expect(new Set(t.failures)).toEqual(new Set(['unreachable']))
      expect(t.consumer.failing).toBeNull()
      expect(handled).toEqual([1, 3, 5])
    } finally {
      await t.cleanup()
    }
  })

  test('a batch the store refuses for its data is split at once, not logged as an outage', async () => {
    const handler: BatchHandler = {
      name: 'store',
      store: 'clickhouse',
      async handle(batch: Batch) {
        if (batch.records.some((r) => r.events.some((e) => e.uuid === 'u2'))) throw new StoreError('Code: 27. Cannot parse input', false)
      },
      probe: async () => true,
      rejects: (e) => e instanceof StoreError && !e.transient,
    }
    const t = setup(4, handler, 150)
    try {
      expect(await t.consumer.catchUp(Date.now() + 30_000)).toBe(true)
      expect(outageLines(t.lines)).toEqual([])
      expect(t.failures[0]).toBe('rejected_by_store')
    } finally {
      await t.cleanup()
    }
  })
})
