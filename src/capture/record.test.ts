import { describe, expect, test } from 'bun:test'
import { replayRecord } from '../pipeline/replay'
import { decodeRecord, encodeRecord, parseRequest, type CaptureRequest } from './record'

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
