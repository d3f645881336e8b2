import { describe, expect, test } from 'bun:test'
import { QueryRunError } from './runner'
import { FairSlots } from './slots'

const later = (ms: number) => Date.now() + ms

describe('FairSlots', () => {
  test('one project holds at most half of the slots; another project gets one at once', async () => {
    const slots = new FairSlots(2)
    const a1 = await slots.acquire(1, later(10_000))
    let a2Granted = false
    const a2 = slots.acquire(1, later(10_000)).then((release) => ((a2Granted = true), release))
    await Bun.sleep(5)
    expect(a2Granted).toBe(false) // project 1 has its one slot
    const b1 = await slots.acquire(2, later(10_000)) // project 2 is not behind project 1's queue
    expect(slots.use()).toEqual({ running: 2, waiting: 1 })
    a1()
    const release = await a2
    expect(slots.use()).toEqual({ running: 2, waiting: 0 })
    release()
    b1()
    expect(slots.use()).toEqual({ running: 0, waiting: 0 })
  })

  test('waiting projects are served in turn, each project’s queries in order', async () => {
    const slots = new FairSlots(4) // two a project
    const held = [await slots.acquire(1, later(10_000)), await slots.acquire(1, later(10_000)), await slots.acquire(2, later(10_000)), await slots.acquire(2, later(10_000))]
    const order: string[] = []
    const wait = (project: number, name: string) => slots.acquire(project, later(10_000)).then((release) => (order.push(name), release))
    const waiting = [wait(1, 'a1'), wait(1, 'a2'), wait(1, 'a3'), wait(3, 'c1'), wait(3, 'c2')]
    for (const release of held) release()
    const releases = await Promise.all(waiting.slice(0, 2).concat(waiting.slice(3)))
    // four slots freed: project 1 gets two (its cap), project 3 two; a3 waits for project 1's next free slot
    expect(order.sort()).toEqual(['a1', 'a2', 'c1', 'c2'])
    releases[0]!()
    const a3 = await waiting[2]!
    expect(order.at(-1)).toBe('a3')
    for (const release of [...releases.slice(1), a3]) release()
    expect(slots.use()).toEqual({ running: 0, waiting: 0 })
  })

  test('a wait past the deadline is a timeout; a client gone while waiting is client_closed; both free their place', async () => {
    const slots = new FairSlots(1)
    const held = await slots.acquire(1, later(10_000))
    const timedOut = await slots.acquire(2, later(30)).catch((e) => e)
    expect(timedOut).toBeInstanceOf(QueryRunError)
    expect(timedOut.kind).toBe('timeout')
    const client = new AbortController()
    const gone = slots.acquire(2, later(10_000), client.signal).catch((e) => e)
    client.abort()
    expect((await gone).kind).toBe('client_closed')
    expect(slots.use()).toEqual({ running: 1, waiting: 0 })
    held()
    held() // twice is harmless
    expect(slots.use()).toEqual({ running: 0, waiting: 0 })
  })
})
