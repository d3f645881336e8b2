import { describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { silentLogger } from '../log'
import { Checkpoint } from './checkpoint'
import { Consumer, MAX_BATCH_BYTES, type Batch, type BatchHandler } from './consumer'
import { Ring } from './ring'

/** A consumer over records 1..n, all in the ring (the log itself is never read). */
function consumerOver(n: number, checkpoint: Checkpoint, handled: { batch: [number, number]; inDoubt: boolean }[], decodedSize = 1) {
  const ring = new Ring(1000, Number.MAX_SAFE_INTEGER)
  for (let seq = 1; seq <= n; seq++) {
    ring.push({ seq, projectId: 1, receivedAt: 0, size: 1, decodedSize, dropped: new Map(), events: [{ uuid: `u${seq}`, event: 'e', distinctId: 'd', properties: {}, timestamp: 0 }] })
  }
  const handler: BatchHandler = {
    name: 'store',
    async handle(batch: Batch, inDoubt: boolean) {
      handled.push({ batch: [batch.firstSeq, batch.lastSeq], inDoubt })
    },
    probe: async () => true,
  }
  const wal = { lastSeq: n, firstSeq: 1, locate: () => null, validBytes: () => 0 }
  return new Consumer(
    {
      wal,
      ring,
      checkpoint,
      replay: () => {
        throw new Error('not in the ring')
      },
      maxEvents: 100,
      intervalMs: 10,
      log: silentLogger,
      poison: () => undefined,
      onProgress: () => undefined,
    },
    handler,
  )
}

describe('the consumer after a crash', () => {
  test('the batch that may have landed is rebuilt with the same bounds, in doubt; what follows comes after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-consumer-'))
    try {
      const checkpoint = new Checkpoint(join(dir, 'checkpoint'))
      // before the crash: records 1-3 done, an insert of 4-6 attempted; since then the log grew to 20
      checkpoint.update((s) => {
        s.done.store = 3
        s.attempting.store = 6
      })
      const handled: { batch: [number, number]; inDoubt: boolean }[] = []
      const consumer = consumerOver(20, checkpoint, handled)
      expect(await consumer.catchUp(Date.now() + 5000)).toBe(true)
      expect(handled).toEqual([
        { batch: [4, 6], inDoubt: true },
        { batch: [7, 20], inDoubt: false },
      ])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe('a batch is bounded by what its records weigh', () => {
  test('records of a quarter of the bound each: four to a batch, whatever the event count allows', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-consumer-'))
    try {
      const handled: { batch: [number, number]; inDoubt: boolean }[] = []
      const consumer = consumerOver(10, new Checkpoint(join(dir, 'checkpoint')), handled, MAX_BATCH_BYTES / 4)
      expect(await consumer.catchUp(Date.now() + 5000)).toBe(true)
      expect(handled.map((h) => h.batch)).toEqual([[1, 4], [5, 8], [9, 10]])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('one record heavier than the bound still makes a batch of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'phog-consumer-'))
    try {
      const handled: { batch: [number, number]; inDoubt: boolean }[] = []
      const consumer = consumerOver(2, new Checkpoint(join(dir, 'checkpoint')), handled, MAX_BATCH_BYTES * 2)
      expect(await consumer.catchUp(Date.now() + 5000)).toBe(true)
      expect(handled.map((h) => h.batch)).toEqual([[1, 1], [2, 2]])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
