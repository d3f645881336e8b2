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

  test('what is already well formed comes back as the same object, without a copy', () => {
    const clean = { a: 'x', list: [1, 'two', { deep: true }], nested: { b: null } }
    expect(wellFormed(clean)).toBe(clean)
    const dirty = { a: 'x', nested: { b: 'bad\0', c: 'ok' }, after: ['fine'] }
    const fixed = wellFormed(dirty)
    expect(fixed).toEqual({ a: 'x', nested: { b: 'bad\uFFFD', c: 'ok' }, after: ['fine'] })
    expect(fixed.after).toBe(dirty.after)
    expect(dirty.nested.b).toBe('bad\0') // the input is not modified
  })

  test('a bad string deep in nested objects is fixed in time linear in the depth', () => {
    let deep: Record<string, unknown> = { leaf: 'x\uD800' }
    for (let i = 0; i < 2000; i++) deep = { [`k${i}`]: deep, other: 'ok' }
    let node = wellFormed(deep)
    for (let i = 1999; i >= 0; i--) node = node[`k${i}`] as Record<string, unknown>
    expect(node.leaf).toBe('x\uFFFD')
  })

  test('a "__proto__" key in a copied object stays a key and does not become the prototype', () => {
    const parsed = JSON.parse('{"bad":"\\u0000","__proto__":{"polluted":true}}')
    const fixed = wellFormed(parsed)
    expect(Object.getPrototypeOf(fixed)).toBe(Object.prototype)
    expect(JSON.stringify(fixed)).toBe('{"bad":"\uFFFD","__proto__":{"polluted":true}}')
    // and when it comes before the bad value (copied with the keys already walked)
    const before = wellFormed(JSON.parse('{"__proto__":{"polluted":true},"k":1,"bad":"\\u0000"}'))
    expect(Object.getPrototypeOf(before)).toBe(Object.prototype)
    expect(JSON.stringify(before)).toBe('{"__proto__":{"polluted":true},"k":1,"bad":"\uFFFD"}')
  })
})
