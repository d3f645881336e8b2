import { describe, expect, test } from 'bun:test'
import { tokenize } from '../../src/query/lexer'
import { hogqlString, hourlyPoints, hourlyQuery } from './hours'

describe('Events per hour buckets', () => {
  const now = Date.parse('2026-11-27T03:18:00Z')

  test('24 buckets ending with the current hour; missing hours are 0', () => {
    const points = hourlyPoints([['2026-11-27T03:00:00.000Z', 2], ['2026-11-26T10:00:00Z', 5]], now)
    expect(points).toHaveLength(24)
    expect(points[23].value).toBe(2)
    expect(points[23 - 17].value).toBe(5)
    expect(points.reduce((s, p) => s + p.value, 0)).toBe(7)
  })

  test('a time without a zone is UTC; rows outside the window are left out', () => {
    const points = hourlyPoints([['2026-11-27 02:00:00', '4' as unknown as number], ['2026-11-25T00:00:00Z', 9]], now)
    expect(points[22].value).toBe(4)
    expect(points.reduce((s, p) => s + p.value, 0)).toBe(4)
  })

  test("the filters narrow the query; their text stays a string literal, whatever it holds", () => {
    expect(hourlyQuery({})).not.toContain('event =')
    const q = hourlyQuery({ eventName: "x' OR 1=1 --", distinctId: 'a\\' })
    expect(q).toContain("event = 'x\\' OR 1=1 --'")
    expect(q).toContain("distinct_id = 'a\\\\'")
    expect(hogqlString("it's")).toBe("'it\\'s'")
    // the server's own lexer reads each back as one string, the text as typed
    for (const text of ["x' OR 1=1 --", 'a\\', "\\'", 'plain']) {
      const tokens = tokenize(hogqlString(text), 10).filter((t) => t.kind !== 'eof')
      expect(tokens.map((t) => [t.kind, t.text])).toEqual([['string', text]])
    }
  })

  test('each hour is labelled with its date and time', () => {
    const points = hourlyPoints([], now)
    expect(points[23].label).toBe(new Date(Date.parse('2026-11-27T03:00:00Z')).toLocaleString([], { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }))
    expect(points[23].label).toContain(':00')
    expect(points[23].label).not.toMatch(/AM|PM/)
  })
})
