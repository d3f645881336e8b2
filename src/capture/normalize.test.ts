import { describe, expect, test } from 'bun:test'
import type { ApiError } from '../http/errors'
import { assertEventShapes, derivedUuid, extractPayload, MAX_EVENT_BYTES, normalizeEvents, resolveSentAt, type CaptureContext } from './normalize'
import { parseTimestamp } from './timestamp'

const NOW = Date.UTC(2024, 5, 1, 12, 0, 0)
const ctx = (over: Partial<CaptureContext> = {}): CaptureContext => ({
  receivedAt: NOW,
  seed: new Uint8Array(16).map((_, i) => i * 17),
  ip: '203.0.113.9',
  sentAtQuery: null,
  engage: false,
  userAgent: null,
  ...over,
})
const one = (e: unknown, over: Partial<CaptureContext> = {}, sentAt?: unknown) => normalizeEvents([e], ctx(over), sentAt)
const q = (s = '') => new URLSearchParams(s)

describe('extractPayload', () => {
  test('a single event carries its own key', () => {
    expect(extractPayload({ api_key: 'phc_a', event: 'x' }, null, q())).toMatchObject({ token: 'phc_a', items: [{ event: 'x' }] })
    expect(extractPayload({ token: 'phc_b', event: 'x' }, null, q()).token).toBe('phc_b')
    expect(extractPayload({ $token: 'phc_c', event: 'x' }, null, q()).token).toBe('phc_c')
    expect(extractPayload({ event: 'x', properties: { token: 'phc_d' } }, null, q()).token).toBe('phc_d')
  })

  test('the batch envelope’s key covers its events; sent_at and project_id come with it', () => {
    const p = extractPayload({ api_key: 'phc_a', sent_at: '2024-01-01T00:00:00Z', project_id: 7, batch: [{ event: 'x' }] }, null, q())
    expect(p).toEqual({ token: 'phc_a', projectId: 7, items: [{ event: 'x' }], sentAt: '2024-01-01T00:00:00Z', single: false })
  })

  test('an array (posthog-js) takes the key from its events; two different keys are refused', () => {
    expect(extractPayload([{ event: 'a', properties: { token: 'phc_a' } }, { event: 'b' }], null, q()).token).toBe('phc_a')
    expect(() => extractPayload([{ event: 'a', token: 'phc_a' }, { event: 'b', token: 'phc_b' }], null, q())).toThrow('inconsistent api_key')
  })

  test('form fields and the query string are the last places looked', () => {
    expect(extractPayload({ event: 'x' }, new URLSearchParams('api_key=phc_form'), q('token=phc_q')).token).toBe('phc_form')
    expect(extractPayload({ event: 'x' }, null, q('api_key=phc_q')).token).toBe('phc_q')
    expect(extractPayload({ event: 'x' }, null, q()).token).toBeNull()
  })

  test('shapes that are not events are 400', () => {
    expect(() => extractPayload('hello', null, q())).toThrow('expected an event')
    expect(() => extractPayload({ batch: { event: 'x' } }, null, q())).toThrow('"batch" must be an array')
  })
})

describe('normalizeEvents', () => {
  test('keeps name, distinct id, properties; adds $ip; assigns a deterministic uuid', () => {
    const { events } = one({ event: 'signup', distinct_id: 'u1', properties: { plan: 'pro' } })
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ event: 'signup', distinctId: 'u1', properties: { plan: 'pro', $ip: '203.0.113.9' }, timestamp: NOW })
    expect(events[0].uuid).toBe(one({ event: 'signup', distinct_id: 'u1' }).events[0].uuid)
    expect(events[0].uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  test('uuids differ per event and per request seed', () => {
    const a = normalizeEvents([{ event: 'a', distinct_id: 'x' }, { event: 'b', distinct_id: 'x' }], ctx(), undefined).events
    expect(a[0].uuid).not.toBe(a[1].uuid)
    const b = normalizeEvents([{ event: 'a', distinct_id: 'x' }], ctx({ seed: new Uint8Array(16).fill(9) }), undefined).events
    expect(b[0].uuid).not.toBe(a[0].uuid)
    expect(derivedUuid(NOW, new Uint8Array(16), 0).startsWith(NOW.toString(16).padStart(12, '0').slice(0, 8))).toBe(true)
  })

  test('a valid client uuid is kept (lower-cased); one that is not a UUID refuses the payload; empty means absent', () => {
    expect(one({ event: 'a', distinct_id: 'x', uuid: '0190D7A4-1C2B-7000-8000-00000000ABCD' }).events[0].uuid).toBe('0190d7a4-1c2b-7000-8000-00000000abcd')
    for (const uuid of ['nope', 42, {}, '0190d7a4-1c2b-7000-8000-00000000abcz']) {
      expect(() => one({ event: 'a', distinct_id: 'x', uuid })).toThrow('Event field "uuid" is not a valid UUID!')
    }
    expect(one({ event: 'a', distinct_id: 'x', uuid: '' }).events[0].uuid).toMatch(/^[0-9a-f-]{36}$/)
    expect(one({ event: 'a', distinct_id: 'x', uuid: null }).events[0].uuid).toMatch(/^[0-9a-f-]{36}$/)
  })

  test('distinct id from $distinct_id or properties.distinct_id; numbers and booleans become their JSON text', () => {
    expect(one({ event: 'a', $distinct_id: 'p' }).events[0].distinctId).toBe('p')
    expect(one({ event: 'a', properties: { distinct_id: 'in-props' } }).events[0].distinctId).toBe('in-props')
    expect(one({ event: 'a', distinct_id: 23 }).events[0].distinctId).toBe('23')
    expect(one({ event: 'a', distinct_id: 23.5 }).events[0].distinctId).toBe('23.5')
    expect(one({ event: 'a', distinct_id: true }).events[0].distinctId).toBe('true')
    expect(one({ event: 'a', distinct_id: { string: 'a', number: 3 } }).events[0].distinctId).toBe('{"number":3,"string":"a"}')
  })

  test('distinct ids are truncated to 200 characters (not bytes)', () => {
    expect(one({ event: 'a', distinct_id: 'x'.repeat(500) }).events[0].distinctId).toHaveLength(200)
    const emoji = '🦔'.repeat(300)
    expect(Array.from(one({ event: 'a', distinct_id: emoji }).events[0].distinctId)).toHaveLength(200)
  })

  test('no name, no distinct id, or an empty one: dropped and counted, not refused (docs/compatibility.md#dropped-events)', () => {
    const r = normalizeEvents(
      [
        { distinct_id: 'x' },
        { event: '', distinct_id: 'x' },
        { event: 'a' },
        { event: 'a', distinct_id: null },
        { event: 'a', distinct_id: '' },
        { event: 'a', distinct_id: '   ' },
        { event: 'ok', distinct_id: 'x' },
      ],
      ctx(),
      undefined,
    )
    expect(r.events.map((e) => e.event)).toEqual(['ok'])
    expect(Object.fromEntries(r.dropped)).toEqual({ no_event_name: 2, no_distinct_id: 2, empty_distinct_id: 2 })
  })

  test('on /engage a nameless event is $identify', () => {
    expect(one({ $distinct_id: 'x', $set: { a: 1 } }, { engage: true }).events[0].event).toBe('$identify')
  })

  test('$performance_event and recording snapshots are dropped', () => {
    const r = normalizeEvents([{ event: '$performance_event', distinct_id: 'x' }, { event: '$snapshot', distinct_id: 'x' }], ctx(), undefined)
    expect(r.events).toHaveLength(0)
    expect(Object.fromEntries(r.dropped)).toEqual({ performance_event: 1, recording_event: 1 })
  })

  test('top-level $set/$set_once join those in properties, top level winning', () => {
    const e = one({ event: '$identify', distinct_id: 'x', $set: { a: 1, b: 2 }, $set_once: { c: 3 }, properties: { $set: { b: 0, d: 4 } } }).events[0]
    expect(e.properties.$set).toEqual({ a: 1, b: 2, d: 4 })
    expect(e.properties.$set_once).toEqual({ c: 3 })
  })

  test('a client $ip is kept; $lib comes from a posthog user agent only when the event has none', () => {
    expect(one({ event: 'a', distinct_id: 'x', properties: { $ip: '1.1.1.1' } }).events[0].properties.$ip).toBe('1.1.1.1')
    const e = one({ event: 'a', distinct_id: 'x' }, { userAgent: 'posthog-node/4.11.7' }).events[0]
    expect(e.properties).toMatchObject({ $lib: 'posthog-node', $lib_version: '4.11.7' })
    expect(one({ event: 'a', distinct_id: 'x', properties: { $lib: 'web' } }, { userAgent: 'posthog-node/4' }).events[0].properties.$lib).toBe('web')
  })

  test('bad event shapes are 400', () => {
    const err = (items: unknown[]) => {
      try {
        normalizeEvents(items, ctx(), undefined)
      } catch (e) {
        return e as ApiError
      }
      throw new Error('expected error')
    }
    expect(err([null]).detail).toContain('some events are null')
    expect(err([5]).detail).toContain('must be dictionaries')
    expect(err([{ event: 'a', distinct_id: 'x', properties: [1] }]).detail).toContain('Properties must be a JSON object')
  })
})

describe('timestamps', () => {
  const ts = (e: Record<string, unknown>, sentAt?: unknown, over: Partial<CaptureContext> = {}) =>
    one({ event: 'a', distinct_id: 'x', ...e }, over, sentAt).events[0].timestamp

  test('default to the time of receipt', () => expect(ts({})).toBe(NOW))

  test('a timestamp is corrected for the client clock’s skew using sent_at', () => {
    // client clock 10 minutes fast: event 1 minute before sending
    const sentAt = new Date(NOW + 600_000).toISOString()
    const at = new Date(NOW + 600_000 - 60_000).toISOString()
    expect(ts({ timestamp: at }, sentAt)).toBe(NOW - 60_000)
  })

  test('?_= (ms) is the send time when the body has none; seconds and junk are ignored', () => {
    const at = new Date(NOW - 5000).toISOString()
    expect(ts({ timestamp: at }, undefined, { sentAtQuery: String(NOW + 1000) })).toBe(NOW - 6000)
    expect(ts({ timestamp: at }, undefined, { sentAtQuery: String(Math.floor(NOW / 1000)) })).toBe(NOW - 5000)
    expect(resolveSentAt(undefined, 'abc')).toBeNull()
  })

  test('$ignore_sent_at skips the correction', () => {
    const at = new Date(NOW - 5000).toISOString()
    expect(ts({ timestamp: at, properties: { $ignore_sent_at: true } }, new Date(NOW + 9999).toISOString())).toBe(NOW - 5000)
  })

  test('offset (ms before sending) wins over everything', () => {
    expect(ts({ offset: 1500, timestamp: '2001-01-01T00:00:00Z' })).toBe(NOW - 1500)
  })

  test('timestamps more than 23 hours in the future are clamped to now', () => {
    expect(ts({ timestamp: new Date(NOW + 24 * 3600_000).toISOString() })).toBe(NOW)
    expect(ts({ timestamp: new Date(NOW + 22 * 3600_000).toISOString() })).toBe(NOW + 22 * 3600_000)
  })

  test('an unparseable timestamp means now', () => expect(ts({ timestamp: 'yesterday-ish' })).toBe(NOW))

  test('times the stores cannot round-trip (before 1970, after 2099) mean now', () => {
    expect(ts({ timestamp: '0000-06-01T00:00:00Z' })).toBe(NOW)
    expect(ts({ timestamp: '0099-06-01T00:00:00Z' })).toBe(NOW)
    expect(ts({ timestamp: '1969-12-31T23:59:59Z' })).toBe(NOW)
    expect(ts({ timestamp: -62_000_000_000 })).toBe(NOW)
    expect(ts({ offset: 1e18 })).toBe(NOW)
    expect(ts({ offset: -1e18 })).toBe(NOW)
    // the first second of 1970 is kept as its end (ClickHouse 18.16 cannot store the zero time), on every store
    expect(ts({ timestamp: '1970-01-01T00:00:00Z' })).toBe(1000)
    expect(ts({ timestamp: 0 })).toBe(1000)
    expect(ts({ timestamp: '1970-01-01T00:00:00.999Z' })).toBe(1000)
    expect(ts({ timestamp: '2099-12-31T00:00:00Z' }, undefined, { receivedAt: Date.UTC(2099, 11, 31, 1) })).toBe(Date.UTC(2099, 11, 31))
  })

  test('a send time out of range is ignored, not used to skew the event (sent_at: 1e308)', () => {
    const at = new Date(NOW - 5000).toISOString()
    expect(ts({ timestamp: at }, 1e308)).toBe(NOW - 5000)
    expect(ts({ timestamp: at }, '0000-01-01T00:00:00Z')).toBe(NOW - 5000)
    expect(resolveSentAt(1e308, null)).toBeNull()
  })

  test('formats: zones, +HH, no zone = UTC, date only, epoch seconds and ms, RFC 2822', () => {
    expect(parseTimestamp('2024-06-01T12:00:00Z')).toBe(NOW)
    expect(parseTimestamp('2024-06-01T14:00:00+02:00')).toBe(NOW)
    expect(parseTimestamp('2024-06-01T14:00:00+02')).toBe(NOW)
    expect(parseTimestamp('2024-06-01T07:30:00-0430')).toBe(NOW)
    expect(parseTimestamp('2024-06-01T12:00:00')).toBe(NOW)
    expect(parseTimestamp('2024-06-01 12:00:00.123456')).toBe(NOW + 123)
    expect(parseTimestamp('2024-06-01')).toBe(Date.UTC(2024, 5, 1))
    expect(parseTimestamp(NOW / 1000)).toBe(NOW)
    expect(parseTimestamp(String(NOW))).toBe(NOW)
    expect(parseTimestamp('Sat, 01 Jun 2024 12:00:00 GMT')).toBe(NOW)
    expect(parseTimestamp('2024-13-01T00:00:00Z')).toBeNull()
    expect(parseTimestamp({})).toBeNull()
  })
})

describe('bounds on what an event may carry', () => {
  test('$anon_distinct_id and alias are cut to 200 characters like distinct_id', () => {
    const long = 'a'.repeat(8000)
    const e = one({ event: '$identify', distinct_id: long, properties: { $anon_distinct_id: long, alias: `${long}\u0000` } }).events[0]
    expect(e.distinctId).toHaveLength(200)
    expect(e.properties.$anon_distinct_id).toBe(e.distinctId)
    expect(e.properties.alias).toBe('a'.repeat(200))
    expect(one({ event: 'x', distinct_id: 'd', properties: { $anon_distinct_id: 42 } }).events[0].properties.$anon_distinct_id).toBe(42)
  })

  const nested = (levels: number) => {
    let v: unknown = 'leaf'
    for (let i = 0; i < levels; i++) v = { v }
    return v
  }

  test('in a batch, an event nesting deeper than 128 levels is dropped and counted; the others are kept', () => {
    const deep = { event: 'deep', distinct_id: 'd', properties: nested(200) }
    const r = normalizeEvents([{ event: 'ok', distinct_id: 'd' }, deep, { event: 'ok2', distinct_id: nested(300) }], ctx(), undefined, { check: true, single: false })
    expect(r.events.map((e) => e.event)).toEqual(['ok'])
    expect(r.dropped.get('too_deep')).toBe(2)
    // 127 levels of properties inside the event object: 128 in all, accepted
    expect(normalizeEvents([{ event: 'edge', distinct_id: 'd', properties: nested(126) }], ctx(), undefined, { check: true, single: false }).events).toHaveLength(1)
  })

  test('a lone event nesting too deep refuses the request, naming the limit', () => {
    expect(() => normalizeEvents([{ event: 'deep', distinct_id: 'd', properties: nested(200) }], ctx(), undefined, { check: true, single: true })).toThrow(
      'deeper than 128 levels',
    )
  })

  test('an event whose JSON is over 1 MB is dropped and counted, alone or in a batch; its neighbours are kept', () => {
    const big = { event: 'big', distinct_id: 'd', properties: { blob: 'é'.repeat(MAX_EVENT_BYTES / 2) } } // 1 MB of characters, 2 MB of UTF-8
    const fits = { event: 'fits', distinct_id: 'd', properties: { blob: 'x'.repeat(MAX_EVENT_BYTES - 100) } }
    const r = normalizeEvents([{ event: 'ok', distinct_id: 'd' }, big, fits], ctx(), undefined, { check: false, single: false, large: true })
    expect(r.events.map((e) => e.event)).toEqual(['ok', 'fits'])
    expect(r.dropped.get('too_large')).toBe(1)
    expect(normalizeEvents([big], ctx(), undefined, { check: false, single: true, large: true }).dropped.get('too_large')).toBe(1)
  })

  test('capture refuses a request holding an event over 1 MB with 413 event_too_big, alone or in a batch', () => {
    const big = { event: 'big', distinct_id: 'd', properties: { blob: 'é'.repeat(MAX_EVENT_BYTES / 2) } } // 2 MB of UTF-8
    const fits = { event: 'fits', distinct_id: 'd', properties: { blob: 'x'.repeat(MAX_EVENT_BYTES - 100) } }
    const refusal = (items: unknown[], single: boolean, check = false) => {
      try {
        assertEventShapes(items, { check, single, large: true })
      } catch (error) {
        return error as ApiError
      }
      return null
    }
    expect(refusal([big], true)).toMatchObject({ status: 413, code: 'event_too_big', type: 'client_error' })
    const inBatch = refusal([{ event: 'ok', distinct_id: 'd' }, big, fits], false)
    expect(inBatch).toMatchObject({ status: 413, code: 'event_too_big' })
    expect(inBatch!.detail).toContain('Event 2 of 3')
    expect(inBatch!.detail).toContain(`${MAX_EVENT_BYTES} bytes`)
    expect(refusal([{ event: 'ok', distinct_id: 'd' }, fits], false)).toBeNull()
    // not measured when the request's text is too short to hold such an event
    expect(() => assertEventShapes([big], { check: false, single: true, large: false })).not.toThrow()
    // a too-deep event of a batch is dropped, not measured (it may be too deep to serialise)
    let deep: unknown = { blob: 'x'.repeat(MAX_EVENT_BYTES) }
    for (let i = 0; i < 200; i++) deep = [deep]
    expect(refusal([{ event: 'deep', distinct_id: 'd', properties: { deep } }], false, true)).toBeNull()
  })
})

describe('names and ids mean the same on every store', () => {
  test('NULs and lone surrogates in an event name or a distinct id become U+FFFD, as Postgres keeps them', () => {
    const [e] = normalizeEvents([{ event: 'sign\u0000up\ud800', distinct_id: 'user\u0000\udc00', properties: { raw: 'kept\u0000' } }], { receivedAt: 1_700_000_000_000, seed: new Uint8Array(16), ip: null, sentAtQuery: null, engage: false, userAgent: null }, undefined).events
    expect(e!.event).toBe('sign\ufffdup\ufffd')
    expect(e!.distinctId).toBe('user\ufffd\ufffd')
    // properties are the event's own: kept byte for byte in the event store
    expect(e!.properties.raw).toBe('kept\u0000')
  })
})
