import { describe, expect, test } from 'bun:test'
import LZString from 'lz-string'
import { decompressLz64, Lz64Error } from './lz64'

function randomText(n: number, seed: number): string {
  let x = seed
  let s = ''
  const pool = 'abc {}[]":,0123456789 événement 🦔 中文 \\ \n'
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff
    s += pool[x % pool.length]
  }
  return s
}

describe('lz64 decompression', () => {
  test('round-trips what lz-string compresses, across sizes and characters', () => {
    for (const [n, seed] of [[1, 1], [2, 2], [10, 3], [100, 4], [1000, 5], [20_000, 6]] as const) {
      const text = randomText(n, seed)
      expect(decompressLz64(LZString.compressToBase64(text), 1e9)).toBe(text)
    }
    const json = JSON.stringify([{ event: '$pageview', properties: { distinct_id: 'abc', $current_url: 'https://x.test/?q=1' } }])
    expect(decompressLz64(LZString.compressToBase64(json), 1e9)).toBe(json)
  })

  test('refuses output past the cap, before building it', () => {
    const bomb = LZString.compressToBase64('a'.repeat(2_000_000))
    expect(bomb.length).toBeLessThan(10_000)
    let error: unknown
    try {
      decompressLz64(bomb, 100_000)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(Lz64Error)
    expect((error as Lz64Error).tooLarge).toBe(true)
  })

  test('corrupt, truncated or foreign input is an error, never a crash', () => {
    const good = LZString.compressToBase64(JSON.stringify({ a: 'hello world hello world' }))
    expect(() => decompressLz64('', 1000)).toThrow(Lz64Error)
    expect(() => decompressLz64('!!!!', 1000)).toThrow(Lz64Error)
    expect(() => decompressLz64('{"event":"x"}', 1000)).toThrow(Lz64Error)
    let failures = 0
    for (let cut = 1; cut < good.length - 1; cut++) {
      try {
        const out = decompressLz64(good.slice(0, cut), 1000)
        expect(typeof out).toBe('string')
      } catch (e) {
        expect(e).toBeInstanceOf(Lz64Error)
        failures++
      }
    }
    expect(failures).toBeGreaterThan(0)
  })
})
