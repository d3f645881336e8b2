import { describe, expect, test } from 'bun:test'
import { replayRecord } from '../pipeline/replay'
import { gzipSync } from 'node:zlib'
import { decodeRecord, encodeRecord, parseRequest, withoutCredential, type CaptureRequest } from './record'

const request = (body: string): CaptureRequest => ({
  method: 'POST',
  body: new TextEncoder().encode(body),
  contentType: 'application/json',
  contentEncoding: null,
  query: new URLSearchParams(),
  ip: null,
  userAgent: null,
  engage: false,
  receivedAt: Date.UTC(2024, 5, 1),
  seed: new Uint8Array(16).fill(7),
})

const nested = (levels: number) => {
  let v: unknown = 'leaf'
  for (let i = 0; i < levels; i++) v = { v }
  return v
}

const logged = (parts: Uint8Array[], seq = 1) => {
  const payload = Buffer.concat(parts)
  return { seq, payload, size: payload.length }
}

describe('a logged capture request', () => {
  test('keeps what capture found out about its nesting; a record logged without it is scanned again, to the same events', () => {
    const body = JSON.stringify({ batch: [{ event: 'ok', distinct_id: 'd' }, { event: 'deep', distinct_id: 'd', properties: nested(200) }] })
    const deep = parseRequest(request(body), 1e6).depth.check
    expect(deep).toBe(true)
    const withFlag = encodeRecord(1, request(body), deep)
    const older = encodeRecord(1, request(body))
    expect(decodeRecord(logged(withFlag).payload).deep).toBe(true)
    expect(decodeRecord(logged(older).payload).deep).toBeUndefined()
    for (const parts of [withFlag, older]) {
      const replayed = replayRecord(logged(parts), 1e6)
      expect(replayed.events.map((e) => e.event)).toEqual(['ok'])
      expect(replayed.dropped.get('too_deep')).toBe(1)
    }
    expect(replayRecord(logged(withFlag), 1e6).events).toEqual(replayRecord(logged(older), 1e6).events)
  })

  test('a shallow request says so, and replays as it did', () => {
    const body = JSON.stringify([{ event: 'a', distinct_id: 'd', properties: nested(20) }])
    const parts = encodeRecord(3, request(body), parseRequest(request(body), 1e6).depth.check)
    expect(decodeRecord(logged(parts).payload).deep).toBe(false)
    expect(replayRecord(logged(parts), 1e6).events.map((e) => e.event)).toEqual(['a'])
  })
})

describe('a capture authenticated with a personal key', () => {
  const key = 'phx_a_personal_key_that_must_not_reach_disk_0001'
  const events = [{ event: 'pk-event', distinct_id: 'd', properties: { plan: 'pro', $lib: 'web' } }]
  const json = JSON.stringify({ api_key: key, project_id: 1, batch: events })
  const variants: [string, CaptureRequest][] = [
    ['plain JSON', request(json)],
    ['gzip', { ...request(''), body: gzipSync(json), contentEncoding: 'gzip' }],
    ['base64 form', { ...request(''), body: new TextEncoder().encode(`data=${encodeURIComponent(Buffer.from(json).toString('base64'))}`), contentType: 'application/x-www-form-urlencoded' }],
    ['query data, key in the query', { ...request(''), method: 'GET', query: new URLSearchParams({ data: JSON.stringify({ batch: events }), api_key: key, _: '1717200000000' }) }],
  ]
  for (const [name, original] of variants) {
    test(`${name}: the logged record holds no trace of the key, and replays to the same events`, () => {
      const text = parseRequest(original, 1e6).text
      const parts = encodeRecord(1, withoutCredential(original, text, key))
      const payload = Buffer.concat(parts)
      expect(payload.includes(key)).toBe(false)
      expect(payload.includes(Buffer.from(key).toString('base64').slice(0, 20))).toBe(false)
      expect(replayRecord(logged(parts), 1e6).events).toEqual(replayRecord(logged(encodeRecord(1, original)), 1e6).events)
    })
  }
})
