import { describe, expect, test } from 'bun:test'
import { TimeoutError, valueWithin, withTimeout } from './timeout'

describe('timeouts', () => {
  test('the outcome when in time, a TimeoutError naming the operation when not', async () => {
    expect(await withTimeout(Promise.resolve(1), 50)).toBe(1)
    await expect(withTimeout(Promise.reject(new Error('boom')), 50)).rejects.toThrow('boom')
    const late = withTimeout(Bun.sleep(200).then(() => 2), 20, 'ping')
    await expect(late).rejects.toBeInstanceOf(TimeoutError)
    await expect(withTimeout(Bun.sleep(200), 20, 'ping')).rejects.toThrow('ping timed out after 20 ms')
  })

  test('valueWithin: the fallback on failure or timeout', async () => {
    expect(await valueWithin(Promise.resolve(true), 50, false)).toBe(true)
    expect(await valueWithin(Promise.reject(new Error('down')), 50, false)).toBe(false)
    expect(await valueWithin(Bun.sleep(200).then(() => true), 20, false)).toBe(false)
  })
})
