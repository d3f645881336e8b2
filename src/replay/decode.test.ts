import { describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { ApiError } from '../http/errors'
import { MAX_RECORDING_VALUES, MAX_RRWEB_EVENTS, MAX_SESSION_ID_CHARS, parseRecordingRequest, RecordingError, validSessionId } from './decode'

const MB = 1024 * 1024
const events = [{ type: 4, data: { href: 'https://a.example/' }, timestamp: 1 }, { type: 2, data: '\u001f\u008bcompressed', timestamp: 2, cv: '2024-10' }]
const snapshot = (sessionId: unknown = 's-1', extra: Record<string, unknown> = {}) => ({
  event: '$snapshot',
  properties: { $session_id: sessionId, $window_id: 'w-1', $snapshot_data: events, token: 'phc_key', distinct_id: 'd-1', ...extra },
})
const raw = (body: string | Uint8Array, query = '', contentType: string | null = null) => ({
  method: 'POST',
  body: typeof body === 'string' ? Buffer.from(body) : body,
  contentType,
  contentEncoding: null,
  query: new URLSearchParams(query),
})
const refusal = (f: () => unknown) => {
  try {
    f()
  } catch (error) {
    if (error instanceof RecordingError) return error.code
    if (error instanceof ApiError) return `${error.status} ${error.code}`
    throw error
  }
  return 'accepted'
}

describe('a /s/ request decodes to its snapshot batches, whatever posthog-js version sent it', () => {
  const json = JSON.stringify([snapshot()])
  const encodings: [string, ReturnType<typeof raw>][] = [
    ['json', raw(json, '', 'application/json')],
    ['gzip-js hint (≤1.398.0)', raw(gzipSync(json), 'compression=gzip-js&ver=1.260.0&_=1', 'text/plain')],
    ['gzip by magic bytes alone (1.398.1+)', raw(gzipSync(json), '_=1', 'text/plain')],
    ['gzip with a wrong hint', raw(gzipSync(json), 'compression=base64', 'text/plain')],
    ['base64 form (uncompressed beacon, 1.399.4)', raw(`data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`, 'compression=base64', 'application/x-www-form-urlencoded')],
    ['lz64', raw(LZString.compressToBase64(json), 'compression=lz64')],
    ['a single event', raw(JSON.stringify(snapshot()))],
  ]
  for (const [name, request] of encodings) {
    test(name, () => {
      const parsed = parseRecordingRequest(request, 25 * MB)
      expect(parsed.token).toBe('phc_key')
      expect(parsed.batches).toEqual([{ sessionId: 's-1', windowId: 'w-1', distinctId: 'd-1', source: 'web', library: null, events }])
    })
  }

  test('compressed cv strings are kept as the same string', () => {
    const [batch] = parseRecordingRequest(raw(gzipSync(json)), 25 * MB).batches
    expect(batch.events[1].data).toBe('\u001f\u008bcompressed')
  })

  test('the window id defaults to the session id; a long distinct id is cut to 200 characters; mobile is kept', () => {
    const [batch] = parseRecordingRequest(raw(JSON.stringify(snapshot('s-2', { $window_id: undefined, distinct_id: 'x'.repeat(1000), $snapshot_source: 'mobile' }))), MB).batches
    expect(batch.windowId).toBe('s-2')
    expect(batch.distinctId).toHaveLength(200)
    expect(batch.source).toBe('mobile')
  })
})

describe('what PostHog refuses is refused', () => {
  test('session ids: at most 70 characters of letters, digits and "-"', () => {
    expect(validSessionId('0198a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b')).toBe(true)
    expect(validSessionId('x'.repeat(MAX_SESSION_ID_CHARS))).toBe(true)
    expect(validSessionId('x'.repeat(MAX_SESSION_ID_CHARS + 1))).toBe(false)
    for (const bad of ['', 'a b', 'a/b', 'é', 'a\u0000', 12, null]) expect(validSessionId(bad)).toBe(false)
  })

  test('a 10 KB session id, a bad window id, no snapshot data, an empty batch', () => {
    expect(refusal(() => parseRecordingRequest(raw(JSON.stringify([snapshot('x'.repeat(10_000))])), MB))).toBe('invalid_session_id')
    expect(refusal(() => parseRecordingRequest(raw(JSON.stringify([snapshot(null)])), MB))).toBe('invalid_session_id')
    expect(refusal(() => parseRecordingRequest(raw(JSON.stringify([snapshot('s', { $window_id: '../x' })])), MB))).toBe('invalid_window_id')
    expect(refusal(() => parseRecordingRequest(raw(JSON.stringify([snapshot('s', { $snapshot_data: 'nope' })])), MB))).toBe('missing_snapshot_data')
    expect(refusal(() => parseRecordingRequest(raw('[]'), MB))).toBe('empty_batch')
    expect(refusal(() => parseRecordingRequest(raw('[1, 2'), MB))).toBe('invalid_payload')
  })

  test('nesting past 4,096 levels is refused before it is parsed', () => {
    const deep = `[${'['.repeat(5000)}${']'.repeat(5000)}]`
    expect(refusal(() => parseRecordingRequest(raw(deep), 25 * MB))).toBe('invalid_payload')
  })

  test('millions of tiny events are refused before they are parsed; rrweb events are bounded across $snapshot events', () => {
    // 24 MB of `{},`: 8 million objects (12 s of JSON.parse, a 624 MB block in the flush worker, before)
    const tiny = `[{"event":"$snapshot","properties":{"$session_id":"s","$window_id":"${'w'.repeat(70)}","token":"phc_key","$snapshot_data":[${'{},'.repeat(8_000_000)}{}]}}]`
    const started = performance.now()
    expect(refusal(() => parseRecordingRequest(raw(tiny), 25 * MB))).toBe('invalid_payload')
    expect(performance.now() - started).toBeLessThan(6000) // a scan and no parse: ~0.5 s on a busy machine
    // under the values' bound, but more rrweb events than a request carries, split over several $snapshot events
    const per = MAX_RRWEB_EVENTS / 4 + 1
    const many = JSON.stringify(Array.from({ length: 4 }, (_, i) => snapshot(`s-${i}`, { $snapshot_data: Array.from({ length: per }, () => ({ type: 3 })) })))
    expect(refusal(() => parseRecordingRequest(raw(many), 25 * MB))).toBe('invalid_payload')
    const atTheBound = JSON.stringify([snapshot('s', { $snapshot_data: Array.from({ length: MAX_RRWEB_EVENTS }, () => ({ type: 3 })) })])
    expect(refusal(() => parseRecordingRequest(raw(atTheBound), 25 * MB))).toBe('accepted')
    expect(MAX_RECORDING_VALUES).toBeGreaterThan(4 * MAX_RRWEB_EVENTS)
  })

  test('a gzip bomb costs its cap once: 413 past the cap, 400 past 100 times its size', () => {
    // 25 MB of body inflating to 25 GB: concatenated gzip members of 100 MB of zeros each
    const member = gzipSync(Buffer.alloc(100 * MB))
    const bomb = Buffer.concat(Array.from({ length: Math.floor((25 * MB) / member.length) }, () => member))
    const started = performance.now()
    expect(refusal(() => parseRecordingRequest(raw(bomb), 25 * MB + MB))).toBe('413 request_too_large')
    expect(performance.now() - started).toBeLessThan(2000)
    expect(refusal(() => parseRecordingRequest(raw(gzipSync(Buffer.alloc(10 * MB))), 25 * MB))).toBe('400 invalid_payload')
  })
})
