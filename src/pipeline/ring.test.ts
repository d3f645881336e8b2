import { describe, expect, test } from 'bun:test'
import { Ring, type LoggedRecord } from './ring'

const rec = (seq: number, n = 1): LoggedRecord => ({
  seq,
  projectId: 1,
  receivedAt: 0,
  size: 10,
  decodedSize: 10,
  dropped: new Map(),
  events: Array.from({ length: n }, () => ({ uuid: '', event: 'e', distinctId: 'd', properties: {}, timestamp: 0 })),
})

describe('ring', () => {
  test('holds a contiguous run of records up to its event capacity', () => {
    const ring = new Ring(5)
    expect(ring.push(rec(1, 2))).toBe(true)
    expect(ring.push(rec(2, 2))).toBe(true)
    expect(ring.push(rec(3, 2))).toBe(false) // over capacity: stays in the log
    expect(ring.push(rec(4, 1))).toBe(false) // not contiguous any more
    expect(ring.get(2)?.seq).toBe(2)
    expect(ring.get(3)).toBeUndefined()
    expect(ring.eventCount).toBe(4)
  })

  test('eviction frees room; once empty it takes whatever comes next', () => {
    const ring = new Ring(3)
    ring.push(rec(1, 2))
    ring.push(rec(2, 1))
    ring.evictThrough(1)
    expect(ring.eventCount).toBe(1)
    expect(ring.get(1)).toBeUndefined()
    ring.evictThrough(2)
    expect(ring.length).toBe(0)
    expect(ring.push(rec(9, 10))).toBe(true) // a single large record fits an empty ring
  })

  test('is bounded in bytes too: huge requests are left in the log', () => {
    const ring = new Ring(1000, 25)
    expect(ring.push(rec(1))).toBe(true) // 10 bytes
    expect(ring.push(rec(2))).toBe(true) // 20
    expect(ring.push(rec(3))).toBe(false) // 30 > 25
    const empty = new Ring(1000, 5)
    expect(empty.push(rec(1))).toBe(false)
  })

  test('bounded by decoded size, not by the bytes a compressed record took in the log', () => {
    const ring = new Ring(1000, 1000)
    const small = (seq: number, decodedSize: number): LoggedRecord => ({ ...rec(seq), size: 10, decodedSize })
    expect(ring.push(small(1, 600))).toBe(true)
    expect(ring.push(small(2, 600))).toBe(false) // 10 logged bytes, but 600 decoded: over the cap
    ring.evictThrough(1)
    expect(ring.push(small(2, 600))).toBe(true)
  })
})
