import { describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { ApiError } from './errors'
import { compressionHint, decodePayload, expansionCap, jsonNestingExceeds, MAX_EXPANSION, MAX_JSON_VALUES, MAX_VALUES_PER_WIRE_BYTE, MIN_EXPANDED_BYTES, MIN_VALUES_BUDGET, parseJson, scanJson, valueNestingExceeds, valuesBudget, type RawPayload } from './decode'

const MB = 1024 * 1024
const json = JSON.stringify({ api_key: 'phc_x', event: 'e', distinct_id: 'd', properties: { s: 'ünï 🦔' } })
const enc = (s: string) => new TextEncoder().encode(s)
const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64')

function raw(p: Partial<Omit<RawPayload, 'body'>> & { body?: Uint8Array | string }): RawPayload {
  return {
    method: p.method ?? 'POST',
    body: typeof p.body === 'string' ? enc(p.body) : (p.body ?? new Uint8Array()),
    contentType: p.contentType ?? null,
    contentEncoding: p.contentEncoding ?? null,
    query: p.query ?? new URLSearchParams(),
  }
}

function fails(p: RawPayload, max = MB): ApiError {
  try {
    decodePayload(p, max)
  } catch (e) {
    return e as ApiError
  }
  throw new Error('expected an error')
}

describe('decodePayload', () => {
  test('plain JSON, with any content type', () => {
    expect(decodePayload(raw({ body: json, contentType: 'application/json' }), MB).text).toBe(json)
    expect(decodePayload(raw({ body: json, contentType: 'text/plain' }), MB).text).toBe(json)
    expect(decodePayload(raw({ body: json }), MB).text).toBe(json)
  })

  test('gzip by Content-Encoding, by ?compression=gzip or gzip-js, and by magic bytes alone', () => {
    const gz = gzipSync(json)
    expect(decodePayload(raw({ body: gz, contentEncoding: 'gzip' }), MB).text).toBe(json)
    expect(decodePayload(raw({ body: gz, query: new URLSearchParams('compression=gzip-js') }), MB).text).toBe(json)
    expect(decodePayload(raw({ body: gz, query: new URLSearchParams('compression=gzip') }), MB).text).toBe(json)
    expect(decodePayload(raw({ body: gz, contentType: 'text/plain' }), MB).text).toBe(json)
  })

  test('a gzip hint on a plain body is forgiven', () => {
    expect(decodePayload(raw({ body: json, query: new URLSearchParams('compression=gzip-js') }), MB).text).toBe(json)
  })

  test('lz-string base64 by ?compression=lz64 or lz-string, in the body or a form', () => {
    const lz = LZString.compressToBase64(json)
    expect(decodePayload(raw({ body: lz, query: new URLSearchParams('compression=lz64') }), MB).text).toBe(json)
    expect(decodePayload(raw({ body: lz, query: new URLSearchParams('compression=lz-string') }), MB).text).toBe(json)
    const form = `data=${encodeURIComponent(lz)}&compression=lz64`
    expect(decodePayload(raw({ body: form, contentType: 'application/x-www-form-urlencoded' }), MB).text).toBe(json)
  })

  test('base64 bodies and base64 form data, including + turned into spaces by form encoding', () => {
    expect(decodePayload(raw({ body: b64(json) }), MB).text).toBe(json)
    const withPlus = b64(JSON.stringify({ event: '>>>?' }))
    expect(withPlus).toContain('+')
    const spaced = `data=${withPlus}` // unescaped: the form parser reads '+' as ' '
    expect(decodePayload(raw({ body: spaced, contentType: 'application/x-www-form-urlencoded' }), MB).text).toBe(
      JSON.stringify({ event: '>>>?' }),
    )
    const form = `data=${encodeURIComponent(b64(json))}&ver=1.2.3`
    const decoded = decodePayload(raw({ body: form, contentType: 'application/x-www-form-urlencoded' }), MB)
    expect(decoded.text).toBe(json)
    expect(decoded.form?.get('ver')).toBe('1.2.3')
  })

  test('plain JSON in a form, and data= with no form content type', () => {
    expect(decodePayload(raw({ body: `data=${encodeURIComponent(json)}`, contentType: 'application/x-www-form-urlencoded' }), MB).text).toBe(json)
    expect(decodePayload(raw({ body: `data=${encodeURIComponent(b64(json))}`, contentType: 'text/plain' }), MB).text).toBe(json)
  })

  test('a JSON body with a form content type (curl -d) is still JSON', () => {
    expect(decodePayload(raw({ body: json, contentType: 'application/x-www-form-urlencoded' }), MB).text).toBe(json)
  })

  test('GET data= in the query', () => {
    const q = new URLSearchParams({ data: b64(json) })
    expect(decodePayload(raw({ method: 'GET', query: q }), MB).text).toBe(json)
    const plain = new URLSearchParams({ data: json })
    expect(decodePayload(raw({ method: 'GET', query: plain }), MB).text).toBe(json)
  })

  test('base64 of gzip', () => {
    expect(decodePayload(raw({ body: b64(gzipSync(json)) }), MB).text).toBe(json)
    const form = `data=${encodeURIComponent(b64(gzipSync(json)))}&compression=gzip-js`
    expect(decodePayload(raw({ body: form, contentType: 'application/x-www-form-urlencoded' }), MB).text).toBe(json)
  })

  test('no data is 400 no_data', () => {
    expect(fails(raw({ body: '' }))).toMatchObject({ status: 400, code: 'no_data' })
    expect(fails(raw({ body: 'ver=1', contentType: 'application/x-www-form-urlencoded' }))).toMatchObject({ code: 'no_data' })
  })

  test('a body over the cap is 413 request_too_large', () => {
    expect(fails(raw({ body: 'x'.repeat(2000) }), 1000)).toMatchObject({ status: 413, type: 'client_error', code: 'request_too_large' })
  })

  test('a gzip bomb is refused at the cap with bounded memory', () => {
    const bomb = gzipSync(Buffer.alloc(100 * MB, 32))
    expect(bomb.length).toBeLessThan(200_000)
    const before = process.memoryUsage().rss
    expect(fails(raw({ body: bomb }), 5 * MB)).toMatchObject({ status: 413 })
    expect(process.memoryUsage().rss - before).toBeLessThan(60 * MB)
  })

  test('capture’s decoding: a compressed payload expanding past its cap (bytes or ratio) is 413 payload_too_large', () => {
    const capture = { payloadTooLarge: true }
    const refusal = (p: RawPayload, max = MB) => {
      try {
        decodePayload(p, max, capture)
      } catch (e) {
        return e as ApiError
      }
      throw new Error('expected an error')
    }
    const tooLarge = { status: 413, type: 'client_error', code: 'payload_too_large' }
    // past the byte cap: gzip by magic bytes, by header, by hint; base64 of gzip in a body, a form and a query
    const bomb = gzipSync(Buffer.alloc(3 * MB, 32))
    expect(refusal(raw({ body: bomb }), 2 * MB)).toMatchObject(tooLarge)
    expect(refusal(raw({ body: bomb, contentEncoding: 'gzip' }), 2 * MB)).toMatchObject(tooLarge)
    // past the ratio (100 times its size), well under the byte cap
    const ratioBomb = gzipSync(JSON.stringify({ event: 'e', distinct_id: 'd', properties: { s: 'a'.repeat(2 * MB) } }))
    const ratio = refusal(raw({ body: ratioBomb, query: new URLSearchParams('compression=gzip-js') }), 20 * MB)
    expect(ratio).toMatchObject(tooLarge)
    expect(ratio.detail).toContain(`expands more than ${MAX_EXPANSION} times its size`)
    expect(refusal(raw({ body: b64(ratioBomb) }), 20 * MB)).toMatchObject(tooLarge)
    expect(refusal(raw({ body: `data=${encodeURIComponent(b64(ratioBomb))}&compression=gzip-js`, contentType: 'application/x-www-form-urlencoded' }), 20 * MB)).toMatchObject(tooLarge)
    expect(refusal(raw({ method: 'GET', query: new URLSearchParams({ data: b64(ratioBomb), compression: 'gzip-js' }) }), 20 * MB)).toMatchObject(tooLarge)
    const lz = LZString.compressToBase64(JSON.stringify({ event: 'a'.repeat(2_000_000), distinct_id: 'd' }))
    expect(refusal(raw({ body: lz, query: new URLSearchParams('compression=lz64') }), 20 * MB)).toMatchObject(tooLarge)
    expect(refusal(raw({ body: LZString.compressToBase64(' '.repeat(3_000_000)), query: new URLSearchParams('compression=lz64') }), 100_000)).toMatchObject(tooLarge)
    // a body over the cap as received is still request_too_large; a corrupt stream still 400
    expect(refusal(raw({ body: 'x'.repeat(2000) }), 1000)).toMatchObject({ status: 413, code: 'request_too_large' })
    expect(refusal(raw({ body: bomb.subarray(0, 100) }), 20 * MB)).toMatchObject({ status: 400, code: 'invalid_payload' })
  })

  test('an lz64 bomb is refused at the cap', () => {
    const bomb = LZString.compressToBase64(' '.repeat(3_000_000))
    expect(fails(raw({ body: bomb, query: new URLSearchParams('compression=lz64') }), 100_000)).toMatchObject({ status: 413 })
  })

  test('corrupt or truncated gzip, bad lz64 and invalid UTF-8 are 400 with a helpful detail', () => {
    const gz = gzipSync(json)
    const truncated = fails(raw({ body: gz.subarray(0, gz.length - 8) }))
    expect(truncated).toMatchObject({ status: 400, code: 'invalid_payload' })
    expect(truncated.detail).toContain('Failed to decompress data')
    const corrupt = Buffer.from(gz)
    corrupt[12] ^= 0xff
    expect(fails(raw({ body: corrupt })).status).toBe(400)
    expect(fails(raw({ body: 'not!!lz', query: new URLSearchParams('compression=lz64') })).status).toBe(400)
    const bad = fails(raw({ body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]) }))
    expect(bad.detail).toContain('invalid UTF-8')
  })

  test('compression hints are read case-insensitively; unknown ones mean none', () => {
    expect(compressionHint('GZIP-JS')).toBe('gzip')
    expect(compressionHint('b64')).toBe('base64')
    expect(compressionHint('brotli')).toBe('none')
    expect(compressionHint(null)).toBe('none')
  })
})

describe('parseJson', () => {
  test('parses, and maps NaN and Infinity (sent by Python clients) to null', () => {
    expect(parseJson('{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN stays"}')).toEqual({ a: null, b: [null, null], c: 'NaN stays' })
  })

  test('malformed JSON is 400 with the parser’s message', () => {
    let error: ApiError | undefined
    try {
      parseJson('{"event": ')
    } catch (e) {
      error = e as ApiError
    }
    expect(error).toMatchObject({ status: 400, code: 'invalid_payload' })
    expect(error!.detail).toStartWith('Malformed request data: Invalid JSON:')
  })

  test('JSON nested 100 000 deep is refused, not a crash', () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    try {
      const v = parseJson(deep)
      expect(Array.isArray(v)).toBe(true) // the engine may manage it; either way no crash
    } catch (e) {
      expect((e as ApiError).status).toBe(400)
    }
  })
})

describe('what decoding reports', () => {
  test('the encoding and the carrier, for metrics', () => {
    const { gzipSync } = require('node:zlib') as typeof import('node:zlib')
    const body = (b: string | Uint8Array, contentType: string | null = null, query = '') => ({
      method: 'POST',
      body: typeof b === 'string' ? new TextEncoder().encode(b) : b,
      contentType,
      contentEncoding: null,
      query: new URLSearchParams(query),
    })
    const pick = (d: { encoding: string; via: string }) => [d.encoding, d.via]
    expect(pick(decodePayload(body('{"a":1}'), MB))).toEqual(['json', 'body'])
    expect(pick(decodePayload(body(gzipSync('{"a":1}')), MB))).toEqual(['gzip', 'body'])
    expect(pick(decodePayload(body(Buffer.from('{"a":1}').toString('base64')), MB))).toEqual(['base64', 'body'])
    expect(pick(decodePayload(body(`data=${encodeURIComponent(Buffer.from('{"a":1}').toString('base64'))}`, 'application/x-www-form-urlencoded'), MB))).toEqual(['base64', 'form'])
    expect(pick(decodePayload(body(LZString.compressToBase64('{"a":1}'), null, 'compression=lz64'), MB))).toEqual(['lz64', 'body'])
    expect(pick(decodePayload({ ...body(''), query: new URLSearchParams({ data: '{"a":1}' }) }, MB))).toEqual(['json', 'query'])
  })
})

describe('nesting limits', () => {
  test('jsonNestingExceeds counts objects and arrays, not brackets inside strings', () => {
    expect(jsonNestingExceeds('{"a":[{"b":1}]}', 3)).toBe(false)
    expect(jsonNestingExceeds('{"a":[{"b":1}]}', 2)).toBe(true)
    expect(jsonNestingExceeds('{"a":"[[[[{{{{"}', 1)).toBe(false)
    expect(jsonNestingExceeds('{"a\\"[[[":"\\\\"}', 1)).toBe(false) // escaped quote, then an escaped backslash
    expect(jsonNestingExceeds(`{"a":${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}}`, 128)).toBe(true)
    expect(jsonNestingExceeds('"unterminated', 1)).toBe(false)
  })

  test('valueNestingExceeds walks without recursion (a million levels)', () => {
    let v: unknown = 1
    for (let i = 0; i < 1_000_000; i++) v = [v]
    expect(valueNestingExceeds(v, 128)).toBe(true)
    expect(valueNestingExceeds({ a: [{ b: 1 }] }, 3)).toBe(false)
    expect(valueNestingExceeds({ a: [{ b: 1 }] }, 2)).toBe(true)
  })
})

describe('decoding costs bounded before the key is known', () => {
  test('an lz64 payload expanding more than 100 times its size is refused as soon as it passes that', () => {
    const bomb = LZString.compressToBase64(JSON.stringify({ event: 'a'.repeat(2_000_000), distinct_id: 'd' }))
    const e = fails(raw({ body: bomb, query: new URLSearchParams('compression=lz64') }), 20 * MB)
    expect(e.status).toBe(400)
    expect(e.detail).toContain('expands more than 100 times')
    // an ordinary payload decodes
    const ok = LZString.compressToBase64(JSON.stringify({ event: 'x', distinct_id: 'd', properties: { url: 'https://example.com/a' } }))
    expect(JSON.parse(decodePayload(raw({ body: ok, query: new URLSearchParams('compression=lz64') }), MB).text).event).toBe('x')
  })

  test('base64 with whitespace: spaces are form-encoded pluses, other whitespace is dropped (one pass, no callbacks)', () => {
    const json = JSON.stringify({ event: 'e', distinct_id: 'a+b?c>' })
    const encoded = b64(json)
    const spaced = `${encoded.slice(0, 10)}\n\r\t${encoded.slice(10, 20)}\n${encoded.slice(20)}`.replaceAll('+', ' ')
    expect(JSON.parse(decodePayload(raw({ body: spaced }), MB).text)).toEqual(JSON.parse(json))
  })
})

describe('compressed payloads cannot buy more than their size', () => {
  const MAX = 20 * MB
  test('gzip expanding more than MAX_EXPANSION times is refused as it inflates, like lz64', () => {
    // 3 million values: 6 MB of JSON from a 6 KB body (the attack: 270 ms of the request thread, then 401)
    const bomb = gzipSync(`{"api_key":"phc_x","batch":[${'0,'.repeat(3_000_000)}0]}`)
    expect(bomb.length).toBeLessThan(MIN_EXPANDED_BYTES)
    const e = fails(raw({ body: bomb, contentEncoding: 'gzip' }), MAX)
    expect([e.status, e.code]).toEqual([400, 'invalid_payload'])
    expect(e.detail).toContain(`expands more than ${MAX_EXPANSION} times`)
    // the same through base64 (the form and GET data= carriers)
    expect(fails(raw({ body: `data=${encodeURIComponent(bomb.toString('base64'))}`, query: new URLSearchParams('compression=gzip-js') }), MAX).status).toBe(400)
    // a real batch compresses far less than that and passes; so does anything that fits MIN_EXPANDED_BYTES
    const batch = JSON.stringify({ api_key: 'phc_x', batch: Array.from({ length: 500 }, (_, i) => ({ event: '$pageview', distinct_id: `u${i}`, properties: { $current_url: `https://example.com/p/${i}`, $browser: 'Chrome' } })) })
    expect(decodePayload(raw({ body: gzipSync(batch), contentEncoding: 'gzip' }), MAX).text).toBe(batch)
    expect(decodePayload(raw({ body: gzipSync(' '.repeat(MIN_EXPANDED_BYTES - 10) + '{}') }), MAX).text.length).toBe(MIN_EXPANDED_BYTES - 8)
  })
  test('the cap never exceeds the request cap (413 past it)', () => {
    expect(expansionCap(10, 1000)).toBe(1000)
    expect(expansionCap(10_000, MAX)).toBe(10_000 * MAX_EXPANSION)
    expect(fails(raw({ body: gzipSync(' '.repeat(300_000) + '{}') }), 50_000).status).toBe(413)
  })
  test('scanJson counts values and containers outside strings, and stops at the limit', () => {
    expect(scanJson('[1,2,3]', 10, 4)).toEqual({ deep: false, tooManyValues: false })
    expect(scanJson('[1,2,3,4]', 10, 4)).toEqual({ deep: false, tooManyValues: true })
    expect(scanJson('{"a":"1,2,3,4,5,6"}', 10, 3).tooManyValues).toBe(false)
    expect(scanJson('[[[1]]]', 2).deep).toBe(true)
    expect(valuesBudget(100)).toBe(MIN_VALUES_BUDGET)
    expect(valuesBudget(100_000)).toBe(MAX_VALUES_PER_WIRE_BYTE * 100_000)
    expect(valuesBudget(1e9)).toBe(MAX_JSON_VALUES)
  })
})
