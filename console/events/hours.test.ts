import { describe, expect, test } from 'bun:test'
import { hourlyPoints } from './hours'

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
})
