import { describe, expect, test } from 'bun:test'
import { axisTicks, labelledIndexes, tickText } from './axis'

describe('chart axes', () => {
  test('round steps from 0 up to at least the largest value', () => {
    expect(axisTicks(7)).toEqual([0, 2, 4, 6, 8])
    expect(axisTicks(100)).toEqual([0, 50, 100])
    expect(axisTicks(1)).toEqual([0, 1])
    expect(axisTicks(0)).toEqual([0, 1])
    expect(axisTicks(0.3)).toEqual([0, 0.1, 0.2, 0.3])
    expect(axisTicks(12345)).toEqual([0, 5000, 10000, 15000])
    for (const max of [3, 9, 17, 250, 999, 1001]) {
      const ticks = axisTicks(max)
      expect(ticks[ticks.length - 1]).toBeGreaterThanOrEqual(max)
      expect(ticks.length).toBeLessThanOrEqual(6)
    }
  })

  test('tick texts are short', () => {
    expect(tickText(15000)).toBe('15k')
    expect(tickText(2_500_000)).toBe('2.5M')
    expect(tickText(0.1)).toBe('0.1')
  })

  test('about five labels on a time axis, the newest always', () => {
    expect(labelledIndexes(24)).toEqual([3, 8, 13, 18, 23])
    expect(labelledIndexes(3)).toEqual([0, 1, 2])
    expect(labelledIndexes(0)).toEqual([])
  })
})
