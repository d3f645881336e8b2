import { describe, expect, test } from 'bun:test'
import { encodeRecord, type CaptureRequest } from '../capture/record'
import { wellFormed, wellFormedText } from '../db/text'
import { replayRecord } from './replay'

const request = (body: string, over: Partial<CaptureRequest> = {}): CaptureRequest => ({
  method: 'POST',
  body: new TextEncoder().encode(body),
  contentType: 'application/json',
  contentEncoding: null,
  query: new URLSearchParams(),
  ip: '10.0.0.1',
  userAgent: 'posthog-js/1.200.0',
  engage: false,
  receivedAt: Date.UTC(2024, 5, 1),
  seed: new Uint8Array(16).fill(3),
  ...over,
})

const replay = (r: CaptureRequest) => {
  const payload = Buffer.concat(encodeRecord(1, r))
  return replayRecord({ seq: 1, payload, size: payload.length }, 1e7)
}

describe('a replayed record known to be well formed', () => {
  test('is so only when every string of its events is: the learner then takes them as they are', () => {
    let seed = 11
    const pick = <T>(xs: T[]): T => xs[(seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) % xs.length]
    // strings as JSON text: some plain, some escaped into NUL, lone surrogates or harmless characters
    const plain = ['"plain"', '"ünï 😀"', '"tab\\t"', '42', 'null', '"x"']
    const escaped = ['"nul \\u0000"', '"lone \\ud800"', '"low \\uDC00"', '"a \\u0041"', '"back\\\\u0000slash"']
    const texts = [...plain, ...plain, ...plain, ...plain, ...plain, ...escaped]
    let known = 0
    for (let i = 0; i < 1000; i++) {
      const events = Array.from({ length: 2 }, () => {
        const key = pick(texts.filter((t) => t.startsWith('"')))
        return `{"event":${pick(texts)},"distinct_id":${pick(texts)},"properties":{${key}:${pick(texts)},"$set":{${key}:${pick(texts)}}},"$set_once":{"k":${pick(texts)}}}`
      })
      const record = replay(request(`[${events.join(',')}]`, { ip: pick(['10.0.0.1', '10.0.0.2', 'a\u0000b', null]), userAgent: pick(['posthog-node/4.0', 'curl', 'x\uD800', null]) }))
      if (!record.wellFormed) continue
      known++
      for (const e of record.events) {
        expect(wellFormed(e.properties)).toBe(e.properties)
        expect(wellFormedText(e.event)).toBe(e.event)
        expect(wellFormedText(e.distinctId)).toBe(e.distinctId)
      }
    }
    expect(known).toBeGreaterThan(10)
  })

  test('plain JSON and context are known; a \\u escape, or a context string Postgres refuses, make it unknown', () => {
    const body = '[{"event":"e","distinct_id":"d","properties":{"k":"v"}}]'
    expect(replay(request(body)).wellFormed).toBe(true)
    expect(replay(request('[{"event":"e","distinct_id":"d","properties":{"k\\u0000":"v"}}]')).wellFormed).toBe(false)
    expect(replay(request('[{"event":"e","distinct_id":"d","properties":{"k":"\\ud800"}}]')).wellFormed).toBe(false)
    expect(replay(request(body, { ip: 'a\u0000b' })).wellFormed).toBe(false)
    expect(replay(request(body, { userAgent: 'ua \uDC00' })).wellFormed).toBe(false)
  })
})
