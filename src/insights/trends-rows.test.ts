import { expect, test } from 'bun:test'
import { quantile } from './trends-rows'

test('quantile: exact, interpolated linearly between the nearest values; 0 for no values', () => {
  expect(quantile([], 0.5)).toBe(0)
  expect(quantile([7], 0.99)).toBe(7)
  expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5)
  expect(quantile([3, 5], 0.9)).toBeCloseTo(4.8)
  expect(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95)).toBeCloseTo(9.55)
})
