import { describe, expect, test } from 'bun:test'
import { RateLimiter } from './rate-limit'

describe('rate limiter', () => {
  test('allows a burst of the window size, then asks the caller to wait', () => {
    const limiter = new RateLimiter(3, 60_000)
    const t = 1_000_000
    expect([limiter.take('k', t), limiter.take('k', t), limiter.take('k', t)]).toEqual([0, 0, 0])
    expect(limiter.take('k', t)).toBe(20) // one token refills every 20 s
    expect(limiter.take('other', t)).toBe(0)
  })

  test('refills over time', () => {
    const limiter = new RateLimiter(2, 1000)
    limiter.take('k', 0)
    limiter.take('k', 0)
    expect(limiter.take('k', 0)).toBeGreaterThan(0)
    expect(limiter.take('k', 600)).toBe(0)
  })

  test('zero means unlimited', () => {
    const limiter = new RateLimiter(0, 1000)
    for (let i = 0; i < 100; i++) expect(limiter.take('k')).toBe(0)
  })
})
