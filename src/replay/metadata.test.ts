import { describe, expect, test } from 'bun:test'
import { byFewMonths, joinedActiveMs, MONTHS_PER_INSERT } from './clickhouse-store'
import { activeMsJoining, blockOf, MAX_TIMESTAMP_MS } from './metadata'

const T = 1_700_000_000_000
const click = (t: number, type = 2) => ({ type: 3, data: { source: 2, type, id: 1, x: 0, y: 0 }, timestamp: t })
const input = (t: number) => ({ type: 3, data: { source: 5, text: 'a', id: 2 }, timestamp: t })
const move = (t: number) => ({ type: 3, data: { source: 1, positions: [] }, timestamp: t })
const mutation = (t: number) => ({ type: 3, data: { source: 0, adds: [], removes: [], texts: [], attributes: [] }, timestamp: t })
const meta = (t: number, href: string) => ({ type: 4, data: { href, width: 1, height: 1 }, timestamp: t })
const log = (t: number, level: string) => ({ type: 6, data: { plugin: 'rrweb/console@1', payload: { level, payload: ['x'] } }, timestamp: t })

const block = (events: Record<string, unknown>[]) => blockOf({ sessionId: 's', windowId: 'w', distinctId: 'd', source: 'web', library: 'web', events })

describe("a block's metadata, PostHog's rules", () => {
  test('clicks are Click, DblClick and TouchEnd; keypresses are inputs; mouse activity counts moves and interactions', () => {
    const s = block([click(T), click(T + 1, 4), click(T + 2, 9), click(T + 3, 0), input(T + 4), input(T + 5), move(T + 6)]).summary
    expect(s.clickCount).toBe(3)
    expect(s.keypressCount).toBe(2)
    expect(s.mouseActivityCount).toBe(5)
  })

  test('active time: gaps of at most 5 s between user interactions; mutations are not activity', () => {
    const s = block([click(T), input(T + 4000), mutation(T + 6000), click(T + 20_000), move(T + 25_000)]).summary
    expect(s.activeMs).toBe(4000 + 5000)
    expect([s.firstActivity, s.lastActivity]).toEqual([T, T + 25_000])
    expect(s.firstTimestamp).toBe(T)
    expect(s.lastTimestamp).toBe(T + 25_000)
  })

  test('between blocks, the gap from one block’s last activity to the next one’s first counts when ≤ 5 s', () => {
    const next = block([click(T + 10_000), click(T + 11_000)]).summary
    expect(activeMsJoining(T + 7000, next)).toBe(1000 + 3000)
    expect(activeMsJoining(T, next)).toBe(1000)
    expect(joinedActiveMs(2000, [[T + 10_000, T + 11_000], [T, T + 1000], [-1, -1]])).toBe(2000)
    expect(joinedActiveMs(2000, [[T + 3000, T + 4000], [T, T + 1000]])).toBe(4000)
  })

  test('the first URL is the earliest meta event’s; console levels are counted', () => {
    const s = block([meta(T + 5, 'https://later'), meta(T, 'https://first'), log(T, 'log'), log(T, 'info'), log(T, 'warn'), log(T, 'error'), log(T, 'error')]).summary
    expect(s.firstUrl).toBe('https://first')
    expect([s.consoleLogCount, s.consoleWarnCount, s.consoleErrorCount]).toEqual([2, 1, 2])
  })

  test('lines are [windowId, event] JSON, the events unchanged; size is their bytes', () => {
    const events = [{ type: 2, data: '\u001f\u008b\u0000é', timestamp: T, cv: '2024-10' }]
    const b = block(events)
    expect(b.lines.trim().split('\n').map((l) => JSON.parse(l))).toEqual([['w', events[0]]])
    expect(b.summary.size).toBe(Buffer.byteLength(b.lines))
    expect(b.summary.eventCount).toBe(1)
  })

  test('hostile timestamps (1e300, negative, past Int64, past 2100, fractional) time nothing; the events are kept', () => {
    const hostile = [1e300, -1e300, -1, 9.3e18, MAX_TIMESTAMP_MS, 8.64e15 + 1].map((t) => click(t))
    const s = block([...hostile, click(T + 0.5), input(T + 1000.7)]).summary
    expect([s.firstTimestamp, s.lastTimestamp]).toEqual([T, T + 1000])
    expect([s.firstActivity, s.lastActivity, s.activeMs]).toEqual([T, T + 1000, 1000])
    expect(s.eventCount).toBe(8)
    expect(s.clickCount).toBe(7)
    // a URL cut in the middle of an emoji, or sent with a lone surrogate, is well formed (ClickHouse refused it)
    expect(block([meta(T, `${'a'.repeat(2047)}😀`)]).summary.firstUrl).toBe(`${'a'.repeat(2047)}\ufffd`)
    expect(block([meta(T, 'x\ud800')]).summary.firstUrl).toBe('x\ufffd')
    const none = block(hostile).summary
    expect([none.firstTimestamp, none.lastTimestamp, none.firstActivity, none.activeMs]).toEqual([0, 0, null, 0])
  })
})

describe('ClickHouse inserts touch few months', () => {
  test('rows of many months are cut into inserts of at most MONTHS_PER_INSERT months, in order', () => {
    const rows = Array.from({ length: 250 }, (_, i) => ({ first_timestamp: Date.UTC(1980, i % 125, 15), i }))
    const parts = byFewMonths(rows)
    expect(parts.flat().map((r) => r.i)).toEqual(rows.map((r) => r.i))
    for (const part of parts) expect(new Set(part.map((r) => r.first_timestamp)).size).toBeLessThanOrEqual(MONTHS_PER_INSERT)
    expect(byFewMonths(rows.slice(0, 3).map((r) => ({ ...r, first_timestamp: T })))).toHaveLength(1)
    expect(byFewMonths([])).toEqual([])
  })
})
