import { describe, expect, test } from 'bun:test'
import { StatementRefused, StatementTurns } from './duckdb-turns'

/** settles a promise's state without waiting for it: 'pending' while it has not */
const state = async (p: Promise<unknown>) => Promise.race([p.then(() => 'granted', (e) => (e instanceof StatementRefused ? e.failure : 'rejected')), Bun.sleep(5).then(() => 'pending')])

describe('StatementTurns', () => {
  test('statements run side by side at once, and each knows it had a neighbour', async () => {
    const turns = new StatementTurns()
    const a = await turns.take(false, 1000)
    expect(a.beside).toBe(false)
    const b = await turns.take(false, 1000)
    expect([a.beside, b.beside]).toEqual([true, true])
    turns.end(a)
    turns.end(b)
    const c = await turns.take(false, 1000)
    expect(c.beside).toBe(false) // its neighbours had ended before it began
    turns.end(c)
    expect(turns.use()).toEqual({ running: 0, waiting: 0 })
  })

  test('a turn alone waits for those running; those that come after it wait behind it; then they run again side by side', async () => {
    const turns = new StatementTurns()
    const a = await turns.take(false, 1000)
    const b = await turns.take(false, 1000)
    const alone = turns.take(true, 1000)
    const later = turns.take(false, 1000)
    expect(await state(alone)).toBe('pending')
    expect(await state(later)).toBe('pending') // not ahead of the turn alone: it would never come
    turns.end(a)
    expect(await state(alone)).toBe('pending')
    turns.end(b)
    const mine = await alone
    expect(mine).toMatchObject({ alone: true, beside: false })
    expect(await state(later)).toBe('pending')
    expect(turns.use()).toEqual({ running: 1, waiting: 1 })
    turns.end(mine)
    const next = await later
    expect(next.beside).toBe(false)
    turns.end(next)
    expect(turns.use()).toEqual({ running: 0, waiting: 0 })
  })

  test('a wait past its bound is refused as busy (the turn alone and those behind it), and frees the line', async () => {
    const turns = new StatementTurns()
    const long = await turns.take(false, 1000)
    const alone = turns.take(true, 30)
    const behind = turns.take(false, 60)
    expect(await alone.catch((e) => e.failure)).toBe('busy')
    // the turn alone gave up: the statement behind it starts beside the long one
    const started = await behind
    expect(started.beside).toBe(true)
    turns.end(started)
    const held = turns.take(true, 1000)
    const refusedBehind = turns.take(false, 20)
    expect(await refusedBehind.catch((e) => e.failure)).toBe('busy')
    turns.end(long)
    turns.end(await held)
    expect(turns.use()).toEqual({ running: 0, waiting: 0 })
  })

  test('a statement interrupted while it waits leaves the line with the interrupt as its error', async () => {
    const turns = new StatementTurns()
    const running = await turns.take(false, 1000)
    const stop = new AbortController()
    const alone = turns.take(true, 1000, stop.signal)
    const behind = turns.take(false, 1000)
    stop.abort(new Error('INTERRUPT Error: Interrupted!'))
    expect((await alone.catch((e) => e)).message).toContain('INTERRUPT')
    // no turn alone left in the line: the one behind starts at once
    turns.end(await behind)
    turns.end(running)
    expect(turns.use()).toEqual({ running: 0, waiting: 0 })
    const gone = new AbortController()
    gone.abort(new Error('gone'))
    expect((await turns.take(false, 1000, gone.signal).catch((e) => e)).message).toBe('gone')
  })

  test('turns alone come one after the other, in the order they asked', async () => {
    const turns = new StatementTurns()
    const running = await turns.take(false, 1000)
    const first = turns.take(true, 1000)
    const second = turns.take(true, 1000)
    turns.end(running)
    const one = await first
    expect(await state(second)).toBe('pending')
    turns.end(one)
    const two = await second
    expect(two).toMatchObject({ alone: true, beside: false })
    turns.end(two)
    turns.end(two) // twice is harmless
    expect(turns.use()).toEqual({ running: 0, waiting: 0 })
  })

  test('a write is a neighbour of the statements running and of those that start while it runs, even a turn alone', async () => {
    const turns = new StatementTurns()
    const before = await turns.take(false, 1000)
    turns.writeStarted()
    expect(before.beside).toBe(true)
    turns.end(before)
    const alone = await turns.take(true, 1000)
    expect(alone.beside).toBe(true) // alone among statements, not beside the write
    turns.end(alone)
    turns.writeEnded()
    const after = await turns.take(true, 1000)
    expect(after.beside).toBe(false)
    turns.end(after)
  })

  test('a write that holds the turns: none starts until it lets go, those waiting keep their place and their limit', async () => {
    const turns = new StatementTurns()
    turns.hold()
    const waiting = turns.take(false, 1000)
    const tooLong = turns.take(false, 20)
    tooLong.catch(() => undefined)
    expect(await state(waiting)).toBe('pending')
    await Bun.sleep(30)
    expect(await state(tooLong)).toBe('busy')
    turns.release()
    expect(await state(waiting)).toBe('granted')
    expect(turns.use()).toEqual({ running: 1, waiting: 0 })
  })
})
