import { describe, expect, test } from 'bun:test'
import { ApiError } from '../http/errors'
import { ProjectResultGate } from './result-gate'

describe("a project's stored results in flight", () => {
  test('reads within the room start at once; the next waits for a release, first come first served', async () => {
    const gate = new ProjectResultGate(10, 5_000)
    const a = await gate.acquire(1, 6)
    const order: string[] = []
    const b = gate.acquire(1, 6).then((release) => (order.push('b'), release))
    const c = gate.acquire(1, 1).then((release) => (order.push('c'), release))
    await Bun.sleep(10)
    // c would fit, but b came first: no overtaking, so a heavy read is not starved by small ones
    expect(order).toEqual([])
    a()
    const [releaseB, releaseC] = await Promise.all([b, c])
    expect(order).toEqual(['b', 'c'])
    expect(gate.readingBytes).toBe(7)
    releaseB()
    releaseC()
    expect(gate.readingBytes).toBe(0)
  })

  test('another project is never behind this one', async () => {
    const gate = new ProjectResultGate(10, 5_000)
    const held = await gate.acquire(1, 10)
    const other = await Promise.race([gate.acquire(2, 10), Bun.sleep(50).then(() => null)])
    expect(other).not.toBeNull()
    other!()
    held()
  })

  test('a read larger than the whole room waits for the room to be empty, then goes alone', async () => {
    const gate = new ProjectResultGate(10, 5_000)
    const small = await gate.acquire(1, 3)
    let started = false
    const big = gate.acquire(1, 50).then((release) => ((started = true), release))
    await Bun.sleep(10)
    expect(started).toBe(false)
    small()
    ;(await big)()
    expect(started).toBe(true)
    expect(gate.readingBytes).toBe(0)
  })

  test('past the wait: a retryable 503; a client that leaves: 499; neither keeps a place', async () => {
    const gate = new ProjectResultGate(10, 30)
    const held = await gate.acquire(1, 10)
    const late = await gate.acquire(1, 5).catch((e) => e)
    expect(late).toBeInstanceOf(ApiError)
    expect(late).toMatchObject({ status: 503, code: 'dashboard_busy', headers: { 'retry-after': '2' } })
    const leaving = new AbortController()
    const left = gate.acquire(1, 5, leaving.signal).catch((e) => e)
    leaving.abort()
    expect(await left).toMatchObject({ status: 499 })
    held()
    // nobody left waiting: the room is free for the next
    ;(await gate.acquire(1, 10))()
    expect(gate.readingBytes).toBe(0)
  })
})
