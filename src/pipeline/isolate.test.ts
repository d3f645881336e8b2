import { describe, expect, test } from 'bun:test'
import type { Batch, BatchHandler } from './consumer'
import { isolatePoison, type BatchEvent } from './isolate'
import type { LoggedRecord } from './ring'

function batchOf(names: string[]): Batch {
  const records: LoggedRecord[] = names.map((event, i) => ({
    seq: i + 1,
    projectId: 1,
    receivedAt: 0,
    events: [{ uuid: `u${i}`, event, distinctId: 'd', properties: {}, timestamp: 0 }],
    dropped: new Map(),
    size: 1,
    decodedSize: 1,
  }))
  return { records, firstSeq: 1, lastSeq: names.length, events: names.length, items: names.length, bytes: names.length }
}

class DataError extends Error {}

/** A handler that fails any batch holding a "poison" event (definitely or not), or every batch while `down`. */
function handler(options: { definite: boolean; down?: () => boolean }) {
  const handled: string[] = []
  const h: BatchHandler & { handled: string[] } = {
    name: 'test',
    handled,
    async handle(batch) {
      const names = batch.records.flatMap((r) => r.events.map((e) => e.event))
      if (options.down?.()) throw new Error('connection reset')
      if (names.includes('poison')) throw options.definite ? new DataError('refused') : new Error('timeout')
      handled.push(...names)
    },
    async probe() {
      return true
    },
    rejects: (e) => e instanceof DataError,
  }
  return h
}

const run = (h: ReturnType<typeof handler>, batch: Batch, poisoned: BatchEvent[][]) =>
  isolatePoison(batch, {
    handler: h,
    isDefinite: (e) => h.rejects!(e),
    storeAnswers: () => h.probe(),
    poison: (_consumer, events) => poisoned.push(events),
  })

describe('isolating poison', () => {
  const names = ['a', 'b', 'c', 'poison', 'd', 'e', 'f']

  test('a definite rejection is narrowed down to the event; everything else is handled, in order', async () => {
    const h = handler({ definite: true })
    const poisoned: BatchEvent[][] = []
    expect(await run(h, batchOf(names), poisoned)).toBe(1)
    expect(poisoned.map((p) => p.map((e) => e.event.event))).toEqual([['poison']])
    expect(h.handled).toEqual(['a', 'b', 'c', 'd', 'e', 'f'])
  })

  test('any other failure counts against the data once part of the batch went in', async () => {
    const h = handler({ definite: false })
    const poisoned: BatchEvent[][] = []
    expect(await run(h, batchOf(names), poisoned)).toBe(1)
    expect(poisoned.flat().map((e) => e.event.event)).toEqual(['poison'])
    expect(h.handled.sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f'])
  })

  test('a store that answers pings but takes no insert yet (ClickHouse loading its tables): nothing dead-lettered, the batch is retried', async () => {
    const h = handler({ definite: false, down: () => true })
    const poisoned: BatchEvent[][] = []
    await expect(run(h, batchOf(names), poisoned)).rejects.toThrow('connection reset')
    expect(poisoned).toEqual([])
  })

  test('a lone event whose failure is not definite, with nothing else going in, is retried later, not dead-lettered', async () => {
    const h = handler({ definite: false })
    const poisoned: BatchEvent[][] = []
    await expect(run(h, batchOf(['poison']), poisoned)).rejects.toThrow('timeout')
    expect(poisoned).toEqual([])
  })
})
