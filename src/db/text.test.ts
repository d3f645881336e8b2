import { describe, expect, test } from 'bun:test'
import { wellFormed, wellFormedText } from './text'

describe('text for Postgres', () => {
  test('NUL and lone surrogates become U+FFFD; valid text is untouched', () => {
    expect(wellFormedText('a\0b')).toBe('a\uFFFDb')
    expect(wellFormedText('x\uD800y')).toBe('x\uFFFDy')
    expect(wellFormedText('emoji 🦔')).toBe('emoji 🦔')
  })

  test('deeply, keys included', () => {
    expect(wellFormed<unknown>({ 'k\0': ['\uDC00', { n: 1, ok: true, nil: null }] })).toEqual({ 'k\uFFFD': ['\uFFFD', { n: 1, ok: true, nil: null }] })
  })
})
