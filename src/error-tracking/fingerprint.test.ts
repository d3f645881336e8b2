import { describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { exceptionsOf, fingerprintException, issueIdOf, MAX_EXCEPTIONS, MAX_FRAMES, MAX_TEXT } from './fingerprint'

const frame = (fn: string, inApp: boolean, lineno = 1, colno = 5) => ({ platform: 'web:javascript', filename: `https://app.example.com/${fn}.js`, function: fn, lineno, colno, in_app: inApp })
const listShape = (type: string, value: string, frames: unknown[], handled = false) => ({
  $exception_list: [{ type, value, mechanism: { type: 'generic', handled, synthetic: false }, stacktrace: { type: 'raw', frames } }],
})

/** The rule written out by hand: length-prefixed type, message, then each counted frame's function, file, line, column. */
function expected(parts: string[]): string {
  const h = createHash('sha512')
  for (const p of parts) h.update(`${p.length}:`).update(p, 'utf8')
  return h.digest('hex')
}

describe('fingerprint', () => {
  test('vector: type, message and the in-app frames only', () => {
    const p = fingerprintException(listShape('TypeError', 'x is undefined', [frame('vendor', false), frame('onClick', true, 1, 5123), frame('render', true, 7, 9)]))
    expect(p.$exception_fingerprint).toBe(
      expected(['TypeError', 'x is undefined', 'onClick', 'https://app.example.com/onClick.js', '1', '5123', 'render', 'https://app.example.com/render.js', '7', '9']),
    )
    expect(p.$exception_proposed_fingerprint).toBe(p.$exception_fingerprint)
    expect(p.$exception_fingerprint_record.map((r) => r.type)).toEqual(['exception', 'frame', 'frame'])
    expect(p.$exception_types).toEqual(['TypeError'])
    expect(p.$exception_values).toEqual(['x is undefined'])
    expect(p.$exception_functions).toEqual(['vendor', 'onClick', 'render'])
    expect(p.$exception_sources).toEqual(['https://app.example.com/vendor.js', 'https://app.example.com/onClick.js', 'https://app.example.com/render.js'])
    expect(p.$exception_handled).toBe(false)
  })

  test('no frame in app: the first frame alone counts', () => {
    const a = fingerprintException(listShape('Error', 'boom', [frame('a', false), frame('b', false)]))
    const b = fingerprintException(listShape('Error', 'boom', [frame('a', false), frame('c', false)]))
    expect(a.$exception_fingerprint).toBe(b.$exception_fingerprint)
    expect(a.$exception_fingerprint).toBe(expected(['Error', 'boom', 'a', 'https://app.example.com/a.js', '1', '5']))
    // an out-of-app frame changes nothing once one is in app
    const c = fingerprintException(listShape('Error', 'boom', [frame('z', false), frame('a', true)]))
    const d = fingerprintException(listShape('Error', 'boom', [frame('y', false), frame('a', true)]))
    expect(c.$exception_fingerprint).toBe(d.$exception_fingerprint)
  })

  test('another message, another type, another line: another fingerprint', () => {
    const base = fingerprintException(listShape('Error', 'boom', [frame('a', true)])).$exception_fingerprint
    expect(fingerprintException(listShape('Error', 'bang', [frame('a', true)])).$exception_fingerprint).not.toBe(base)
    expect(fingerprintException(listShape('RangeError', 'boom', [frame('a', true)])).$exception_fingerprint).not.toBe(base)
    expect(fingerprintException(listShape('Error', 'boom', [frame('a', true, 2)])).$exception_fingerprint).not.toBe(base)
    // pieces are length-prefixed: moving characters between type and message is another fingerprint
    expect(fingerprintException(listShape('Errorb', 'oom', [frame('a', true)])).$exception_fingerprint).not.toBe(base)
  })

  test('the older flat shape becomes a list of one', () => {
    const flat = {
      $exception_type: 'TypeError',
      $exception_message: 'x is undefined',
      $exception_stack_trace_raw: JSON.stringify([frame('onClick', true, 1, 5123)]),
    }
    const list = listShape('TypeError', 'x is undefined', [frame('onClick', true, 1, 5123)])
    expect(fingerprintException(flat).$exception_fingerprint).toBe(fingerprintException(list).$exception_fingerprint)
    // a browser's stack text
    const text = fingerprintException({ $exception_type: 'Error', $exception_message: 'm', $exception_stack_trace_raw: 'Error: m\n    at onClick (https://a/x.js:3:4)\n    at https://a/y.js:5:6' })
    expect(text.$exception_functions).toEqual(['onClick'])
    expect(text.$exception_sources).toEqual(['https://a/x.js', 'https://a/y.js'])
    // nothing usable at all: one "Error" with no message
    expect(exceptionsOf({})).toEqual([{ type: 'Error', value: '', handled: null, frames: [] }])
  })

  test('a client fingerprint wins, recorded as manual', () => {
    const p = fingerprintException({ ...listShape('Error', 'boom', [frame('a', true)]), $exception_fingerprint: 'checkout-failures' })
    expect(p.$exception_fingerprint).toBe('checkout-failures')
    expect(p.$exception_proposed_fingerprint).toBe(fingerprintException(listShape('Error', 'boom', [frame('a', true)])).$exception_fingerprint)
    expect(p.$exception_fingerprint_record).toEqual([{ type: 'manual' }])
    // a very long one is hashed (the key of an issue stays bounded); an empty one is ignored
    expect(fingerprintException({ $exception_fingerprint: 'x'.repeat(10_000) }).$exception_fingerprint).toHaveLength(128)
    expect(fingerprintException({ $exception_fingerprint: ' ' }).$exception_fingerprint_record[0]!.type).toBe('exception')
    // what Postgres cannot keep as text is hashed (the issues' consumer would otherwise refuse the event)
    expect(fingerprintException({ $exception_fingerprint: 'a\u0000b' }).$exception_fingerprint).toMatch(/^[0-9a-f]{128}$/)
    expect(fingerprintException({ $exception_fingerprint: 'a\ud800b' }).$exception_fingerprint).toMatch(/^[0-9a-f]{128}$/)
    expect(fingerprintException({ $exception_fingerprint: "it's odd" }).$exception_fingerprint).toBe("it's odd")
    // what not every store reads back alike from JSON is hashed too
    for (const odd of ['a\\b', 'a"b', 'a\nb']) expect(fingerprintException({ $exception_fingerprint: odd }).$exception_fingerprint).toMatch(/^[0-9a-f]{128}$/)
  })

  test('handled only when every exception says so', () => {
    expect(fingerprintException(listShape('E', 'm', [], true)).$exception_handled).toBe(true)
    const two = { $exception_list: [...listShape('E', 'm', [], true).$exception_list, ...listShape('C', 'cause', [], false).$exception_list] }
    expect(fingerprintException(two).$exception_handled).toBe(false)
  })

  test('hostile shapes are read, never thrown on', () => {
    for (const props of [
      { $exception_list: 'nope' },
      { $exception_list: [null, 1, 'x', { type: { nested: true }, value: [1], stacktrace: { frames: 'no' } }] },
      { $exception_list: [{ stacktrace: { frames: [null, { lineno: 'abc', in_app: 'yes' }] } }] },
      { $exception_stack_trace_raw: '[not json' },
      { $exception_stack_trace_raw: 42 },
    ]) {
      const p = fingerprintException(props as Record<string, unknown>)
      expect(p.$exception_fingerprint).toMatch(/^[0-9a-f]{128}$/)
    }
  })

  test('a 5 MB stack trace costs what a 64 KB one does', () => {
    const huge = 'y'.repeat(5 * 1024 * 1024)
    const frames = Array.from({ length: 50_000 }, (_, i) => ({ function: `f${i}${huge.slice(0, 100)}`, filename: 'https://a/x.js', lineno: i, colno: 1, in_app: true }))
    const props = { $exception_list: Array.from({ length: 1000 }, () => ({ type: huge, value: huge, stacktrace: { frames } })) }
    const started = performance.now()
    const p = fingerprintException(props)
    const ms = performance.now() - started
    expect(p.$exception_types).toHaveLength(MAX_EXCEPTIONS)
    expect(p.$exception_types[0]).toHaveLength(MAX_TEXT)
    expect(exceptionsOf(props)[0]!.frames).toHaveLength(MAX_FRAMES)
    expect(ms).toBeLessThan(2000) // ~90 ms measured; unbounded, 1,000 × 5 MB would take seconds
    // the flat shape's 5 MB stack text: only its head is read
    const text = 'Error: m\n' + '    at f (https://a/x.js:1:2)\n'.repeat(200_000)
    const t0 = performance.now()
    const flat = fingerprintException({ $exception_type: 'Error', $exception_message: 'm', $exception_stack_trace_raw: text })
    expect(performance.now() - t0).toBeLessThan(500)
    expect(flat.$exception_fingerprint).toMatch(/^[0-9a-f]{128}$/)
  })

  test('issue ids: a UUID of the project and the fingerprint', () => {
    const a = issueIdOf(1, 'abc')
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(issueIdOf(1, 'abc')).toBe(a)
    expect(issueIdOf(2, 'abc')).not.toBe(a)
    expect(issueIdOf(1, 'abd')).not.toBe(a)
  })
})
