import { describe, expect, test } from 'bun:test'
import { generateKey, hashKey, maskKey, sameHash } from './keys'

describe('keys', () => {
  test('generated keys carry their kind prefix and ~256 bits of base62', () => {
    const k = generateKey('phx')
    expect(k).toMatch(/^phx_[0-9A-Za-z]{40,43}$/)
    expect(generateKey('phc')).toMatch(/^phc_/)
    expect(generateKey('phx')).not.toBe(k)
  })

  test('hashes use PostHog’s unsalted sha256 format', () => {
    // test vector from PostHog's personal API key tests
    expect(hashKey('test_key_12345')).toBe('sha256$45af89b510a3279a817f851de5d3f95b73485d58ec2672a39e52d8aeeb014059')
  })

  test('masks show only the first and last four characters', () => {
    expect(maskKey('phx_abcdefghijklmnop')).toBe('phx_...mnop')
  })

  test('hash comparison is exact', () => {
    expect(sameHash(hashKey('a'), hashKey('a'))).toBe(true)
    expect(sameHash(hashKey('a'), hashKey('b'))).toBe(false)
    expect(sameHash('short', hashKey('a'))).toBe(false)
  })
})

describe('plausibleKey', () => {
  test('keys longer than any real one are refused before any lookup', () => {
    const { plausibleKey, MAX_KEY_LENGTH } = require('./keys') as typeof import('./keys')
    expect(plausibleKey(generateKey('phx'))).toBe(true)
    expect(plausibleKey('x'.repeat(MAX_KEY_LENGTH))).toBe(true)
    expect(plausibleKey('x'.repeat(MAX_KEY_LENGTH + 1))).toBe(false)
    expect(plausibleKey('')).toBe(false)
  })
})
