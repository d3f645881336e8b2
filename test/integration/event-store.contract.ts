// One contract for every EventStore implementation (run by event-store.*.test.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { EventStore, StoredEvent } from '../../src/events/store'

export interface StoreFactory {
  make(): Promise<EventStore>
  cleanup?(): Promise<void>
}

let seq = 0
export function event(overrides: Partial<StoredEvent> = {}): StoredEvent {
  seq++
  return {
    uuid: crypto.randomUUID(),
    teamId: 1,
    event: 'pageview',
    distinctId: `user-${seq}`,
    properties: JSON.stringify({ n: seq, $lib: 'web' }),
    timestamp: Date.UTC(2024, 0, 1, 12, 0, 0) + seq * 1000,
    createdAt: Date.UTC(2024, 0, 1, 12, 0, 5),
    personId: null,
    ...overrides,
  }
}

async function all(store: EventStore, q: Parameters<EventStore['query']>[0], pageSize: number): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  let cursor: { timestamp: number; uuid: string } | undefined
  for (;;) {
    const page = await store.query({ ...q, limit: pageSize, cursor })
    out.push(...page)
    if (page.length < pageSize) return out
    const last = page[page.length - 1]
    cursor = { timestamp: last.timestamp, uuid: last.uuid }
  }
}

export function eventStoreContract(name: string, factory: StoreFactory): void {
  describe(`event store contract: ${name}`, () => {
    let store: EventStore
    beforeAll(async () => {
      store = await factory.make()
    })
    afterAll(async () => {
      await store?.close()
      await factory.cleanup?.()
    })

    const truncate = (ms: number) => ms - (ms % store.timestampPrecisionMs)

    test('init is idempotent', async () => {
      await store.init()
      expect(await store.health()).toBe(true)
    })

    test('rows come back exactly as inserted, newest first', async () => {
      const team = 101
      const rows = [
        event({ teamId: team, timestamp: Date.UTC(2024, 0, 2, 0, 0, 1, 250) }),
        event({ teamId: team, timestamp: Date.UTC(2024, 0, 2, 0, 0, 3, 500), event: '$identify' }),
        event({
          teamId: team,
          timestamp: Date.UTC(2024, 0, 2, 0, 0, 2),
          distinctId: 'ünïcødé 🦔 "quoted" \\ back',
          properties: JSON.stringify({ nested: { a: [1, 2, { b: null }] }, emoji: '🦔', s: "it's" }),
          personId: '0190d7a4-1c2b-7000-8000-000000000001',
        }),
      ]
      await store.insertBatch(rows, { inDoubt: false })
      const got = await store.query({ teamId: team, limit: 10 })
      expect(got.map((r) => r.uuid)).toEqual([rows[1].uuid, rows[2].uuid, rows[0].uuid])
      const third = got[1]
      expect(third).toEqual({
        ...rows[2],
        timestamp: truncate(rows[2].timestamp),
        createdAt: truncate(rows[2].createdAt),
      })
      expect(JSON.parse(third.properties)).toEqual({ nested: { a: [1, 2, { b: null }] }, emoji: '🦔', s: "it's" })
      expect(got[0].timestamp).toBe(truncate(rows[1].timestamp))
    })

    test('text with tabs, newlines, carriage returns, NULs and backslashes comes back byte for byte', async () => {
      const team = 105
      const awkward = 'a\tb\\c\n' + '\t\n\r\0' + ' end\\'
      const properties = JSON.stringify({ 'key\twith\ttabs': 'line\nbreak\r\n\u0000nul \\ slash', path: 'C:\\dir\\file' })
      const row = event({ teamId: team, timestamp: Date.UTC(2024, 0, 3), event: `ev${awkward}`, distinctId: `id${awkward}`, properties })
      await store.insertBatch([row], { inDoubt: false })
      const [got] = await store.query({ teamId: team, limit: 10 })
      expect(got).toEqual({ ...row, timestamp: truncate(row.timestamp), createdAt: truncate(row.createdAt) })
      expect(JSON.parse(got!.properties)).toEqual(JSON.parse(properties))
    })

    test('filters by event, distinct id and time, and never crosses projects', async () => {
      const base = Date.UTC(2024, 1, 1)
      const mine = [
        event({ teamId: 202, event: 'signup', distinctId: 'a', timestamp: base + 1000 }),
        event({ teamId: 202, event: 'signup', distinctId: 'b', timestamp: base + 5000 }),
        event({ teamId: 202, event: "it's \\ odd", distinctId: 'a', timestamp: base + 9000 }),
      ]
      const theirs = [event({ teamId: 203, event: 'signup', distinctId: 'a', timestamp: base + 2000 })]
      await store.insertBatch([...mine, ...theirs], { inDoubt: false })
      expect((await store.query({ teamId: 202, event: 'signup', limit: 10 })).map((r) => r.uuid)).toEqual([mine[1].uuid, mine[0].uuid])
      expect((await store.query({ teamId: 202, distinctId: 'a', limit: 10 })).map((r) => r.uuid)).toEqual([mine[2].uuid, mine[0].uuid])
      expect((await store.query({ teamId: 202, event: "it's \\ odd", limit: 10 })).map((r) => r.uuid)).toEqual([mine[2].uuid])
      expect((await store.query({ teamId: 202, event: "' OR 1=1 --", limit: 10 }))).toEqual([])
      expect((await store.query({ teamId: 202, after: base + 2000, before: base + 9000, limit: 10 })).map((r) => r.uuid)).toEqual([mine[1].uuid])
      expect((await store.query({ teamId: 203, limit: 10 })).map((r) => r.uuid)).toEqual([theirs[0].uuid])
    })

    test('paging with a cursor skips and repeats nothing, even when many rows share a timestamp', async () => {
      const ts = Date.UTC(2024, 2, 1, 10, 0, 0)
      const rows = Array.from({ length: 57 }, (_, i) => event({ teamId: 304, timestamp: ts + (i % 3) * 1000 }))
      await store.insertBatch(rows, { inDoubt: false })
      const listed = await all(store, { teamId: 304, limit: 0 }, 10)
      expect(listed).toHaveLength(57)
      expect(new Set(listed.map((r) => r.uuid)).size).toBe(57)
      for (let i = 1; i < listed.length; i++) {
        const [a, b] = [listed[i - 1], listed[i]]
        expect(a.timestamp > b.timestamp || (a.timestamp === b.timestamp && a.uuid > b.uuid)).toBe(true)
      }
    })

    test('rowSizes gives the size of each row query() answers, in the same order, with the same filter', async () => {
      const ts = Date.UTC(2024, 3, 1)
      const rows = [
        event({ teamId: 306, event: 'e', distinctId: 'ab', properties: '{"x":"é"}', timestamp: ts }),
        event({ teamId: 306, event: 'long', distinctId: 'c', properties: JSON.stringify({ blob: 'z'.repeat(5000) }), timestamp: ts + 1000 }),
        event({ teamId: 307, event: 'other', timestamp: ts + 2000 }),
      ]
      await store.insertBatch(rows, { inDoubt: false })
      const q = { teamId: 306, limit: 10 }
      const sizes = await store.rowSizes(q)
      const listed = await store.query(q)
      const bytes = (t: string) => Buffer.byteLength(t)
      expect(sizes).toEqual(listed.map((r) => bytes(r.event) + bytes(r.distinctId) + bytes(r.properties)))
      expect(sizes[0]).toBeGreaterThan(5000)
      expect(await store.rowSizes({ teamId: 306, event: 'e', limit: 10 })).toEqual([1 + 2 + 10])
    })

    test('an in-doubt retry stores each row once, even when part of it had landed', async () => {
      const rows = Array.from({ length: 20 }, () => event({ teamId: 405 }))
      expect(await store.insertBatch(rows.slice(0, 8), { inDoubt: false })).toBe(8)
      expect(await store.insertBatch(rows, { inDoubt: true })).toBe(12)
      expect(await store.insertBatch(rows, { inDoubt: true })).toBe(0)
      const counts = await store.countByUuid(405, rows.map((r) => r.uuid))
      expect(counts.size).toBe(20)
      expect([...counts.values()].every((n) => n === 1)).toBe(true)
    })

    test('a large batch lands whole', async () => {
      const rows = Array.from({ length: 12_000 }, (_, i) => event({ teamId: 506, timestamp: Date.UTC(2024, 3, 1) + i }))
      await store.insertBatch(rows, { inDoubt: false })
      const counts = await store.countByUuid(506, rows.map((r) => r.uuid))
      expect(counts.size).toBe(12_000)
    })

    test("a person's erasure: every event of its distinct ids in the project is gone when deleteEvents returns, nothing else", async () => {
      const team = 507
      const erased = ["user-a", "anon-a", "it's \\ odd"]
      const rows = [
        ...erased.flatMap((distinctId) => [event({ teamId: team, distinctId }), event({ teamId: team, distinctId })]),
        event({ teamId: team, distinctId: 'user-b' }),
        event({ teamId: 508, distinctId: 'user-a' }), // another project's user-a stays
      ]
      expect(await store.insertBatch(rows, { inDoubt: false })).toBe(rows.length)
      await store.deleteEvents(team, erased)
      const left = await store.query({ teamId: team, limit: 100 })
      expect(left.map((r) => r.distinctId)).toEqual(['user-b'])
      expect((await store.query({ teamId: team, distinctId: 'user-a', limit: 10 })).length).toBe(0)
      expect((await store.query({ teamId: 508, limit: 10 })).map((r) => r.distinctId)).toEqual(['user-a'])
      await store.deleteEvents(team, []) // nothing to do
      await store.deleteEvents(team, ['nobody'])
      expect((await store.query({ teamId: team, limit: 100 })).length).toBe(1)
    })
  })
}
