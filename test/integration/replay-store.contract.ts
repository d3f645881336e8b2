// What every recording store does (src/replay/store.ts): a block written twice counts once, metadata folds across
// blocks, a session's stored bytes read for its cap, the snapshots answer stops at its byte budget between blocks, retention by each project's cutoff, a
// person's recordings deleted, 100,000 one-event sessions written and paged. Run on the embedded store and ClickHouse
// 18.16 (replay-store.test.ts) and on chDB, the modern engine (replay-store.chdb.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { blockOf } from '../../src/replay/metadata'
import type { BlockWrite, RecordingStore } from '../../src/replay/store'

const DAY = 86_400_000
const NOW = Date.now()

function write(teamId: number, id: string, sessionId: string, at: number, distinctId = 'd', extra: Record<string, unknown>[] = []): BlockWrite {
  const events = [{ type: 4, data: { href: `https://x.example/${id}` }, timestamp: at }, { type: 3, data: { source: 2, type: 2, id: 1 }, timestamp: at + 1000 }, ...extra]
  return { teamId, id, block: blockOf({ sessionId, windowId: 'w', distinctId, source: 'web', library: 'web', events }) }
}

export function recordingStoreContract(kind: string, make: () => Promise<RecordingStore>): void {
  describe(`the ${kind} recording store`, () => {
    let store: RecordingStore
    beforeAll(async () => {
      store = await make()
    })
    afterAll(() => store?.close())

    test('a block written twice counts once; blocks fold into the session', async () => {
      const first = write(1, '1-0', 'fold', NOW - 10_000)
      await store.write([first])
      await store.write([first]) // a batch replayed after a crash
      await store.write([write(1, '2-0', 'fold', NOW - 7000)])
      const row = await store.get(1, 'fold')
      expect(row).toMatchObject({ eventCount: 4, clickCount: 2, blockCount: 2, firstUrl: 'https://x.example/1-0', firstTimestamp: NOW - 10_000, lastTimestamp: NOW - 6000 })
      // one click in each block (the meta event is no activity), 3 s apart: active between the blocks
      expect(row!.activeMs).toBe(3000)
      expect((await store.blocks(1, 'fold')).map((b) => b.firstTimestamp)).toEqual([NOW - 10_000, NOW - 7000])
      expect(await store.get(2, 'fold')).toBeNull()
    })

    test("sessionSizes: a session's stored bytes in one read, a block written twice counted once, unknown ones left out", async () => {
      const a = write(11, '11-0', 'sized', NOW - 9000)
      const b = write(11, '11-1', 'sized', NOW - 8000)
      await store.write([a, b])
      await store.write([a])
      const sizes = await store.sessionSizes(11, ['sized', 'never-seen'])
      expect([...sizes]).toEqual([['sized', a.block.summary.size + b.block.summary.size]])
      expect((await store.sessionSizes(12, ['sized'])).size).toBe(0)
      expect((await store.sessionSizes(11, [])).size).toBe(0)
    })

    test('the snapshots answer stops at its byte budget, never mid-block', async () => {
      const big = Array.from({ length: 200 }, (_, i) => ({ type: 3, data: { source: 1, positions: [{ x: i, y: i, id: 1, timeOffset: 0 }] }, timestamp: NOW - 5000 + i }))
      await store.write([write(1, '3-0', 'budget', NOW - 6000, 'd', big), write(1, '4-0', 'budget', NOW - 3000, 'd', big)])
      const [a, b] = await store.blocks(1, 'budget')
      const both = await store.lines(1, 'budget', 0, 1, a.size + b.size)
      expect(both.complete).toBe(true)
      expect(both.text.trim().split('\n')).toHaveLength(404)
      const one = await store.lines(1, 'budget', 0, 1, a.size + b.size - 1)
      expect(one).toMatchObject({ complete: false })
      expect(one.text.trim().split('\n')).toHaveLength(202)
    })

    test("retention: each project's cutoff; a person's recordings go with them", async () => {
      await store.write([write(5, '5-0', 'old-5', NOW - 40 * DAY), write(5, '6-0', 'new-5', NOW - DAY), write(6, '7-0', 'old-6', NOW - 40 * DAY, 'gone'), write(6, '8-0', 'mid-6', NOW - 10 * DAY, 'gone')])
      // project 6 keeps recordings 60 days, the others 30
      const expired = await store.expire((teamId) => NOW - (teamId === 6 ? 60 : 30) * DAY)
      expect(expired).toBe(1)
      expect(await store.get(5, 'old-5')).toBeNull()
      expect(await store.get(5, 'new-5')).not.toBeNull()
      expect(await store.get(6, 'old-6')).not.toBeNull()
      expect(await store.deleteDistinctIds(6, ['gone'])).toBe(2)
      expect(await store.list({ teamId: 6, limit: 10, offset: 0 })).toEqual([])
      expect(await store.delete(5, 'new-5')).toBe(true)
      expect(await store.delete(5, 'new-5')).toBe(false)
    })

    test('100,000 one-event sessions: written in bounded inserts, paged, filtered by distinct id', async () => {
      const started = performance.now()
      for (let chunk = 0; chunk < 10; chunk++) {
        const writes = Array.from({ length: 10_000 }, (_, i) => {
          const n = chunk * 10_000 + i
          return { teamId: 9, id: `${n}-0`, block: blockOf({ sessionId: `tiny-${n}`, windowId: 'w', distinctId: `v-${n % 1000}`, source: 'web', library: null, events: [{ type: 4, data: { href: 'https://t' }, timestamp: NOW - n }] }) }
        })
        await store.write(writes)
      }
      const written = performance.now()
      const page = await store.list({ teamId: 9, limit: 51, offset: 50_000 })
      expect(page).toHaveLength(51)
      const mine = await store.list({ teamId: 9, distinctIds: ['v-7'], limit: 1000, offset: 0 })
      expect(mine).toHaveLength(100)
      console.log(`${kind}: 100,000 one-event sessions written in ${(written - started).toFixed(0)} ms; a page at offset 50,000 in ${(performance.now() - written).toFixed(0)} ms`)
    })
  })
}
