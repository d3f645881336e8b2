// A capture request as the log keeps it: the body bytes as received (still compressed if they came so)
// with what is needed to interpret them again identically: project, time of receipt, uuid seed, hints.
import { decodePayload, MAX_JSON_DEPTH, parseJson, scanJson, tooManyValues, valuesBudget } from '../http/decode'
import { extractPayload, MAX_EVENT_BYTES, type CaptureContext } from './normalize'

export interface CaptureRequest {
  method: string
  body: Uint8Array
  contentType: string | null
  contentEncoding: string | null
  query: URLSearchParams
  ip: string | null
  userAgent: string | null
  /** the request came to /engage */
  engage: boolean
  receivedAt: number
  seed: Uint8Array
}

interface Header {
  p: number
  t: number
  s: string
  m: string
  q: string
  ct: string | null
  ce: string | null
  ip: string | null
  ua: string | null
  e: boolean
  /**
   * The decoded JSON nests deeper than a batch envelope allows somewhere (capture found it out already, so a replay
   * need not scan the text again); absent in records logged before it was kept.
   */
  d?: boolean
  /** what the record holds: absent for events; `r` for session recordings (/s/), read by the recording writer alone */
  k?: 'r'
}

/** The kinds of logged request: events, or session recordings. */
export type RecordKind = 'events' | 'recording'

export function encodeRecord(projectId: number, request: CaptureRequest, deep?: boolean, kind: RecordKind = 'events'): Uint8Array[] {
  const header: Header = {
    p: projectId,
    t: request.receivedAt,
    s: Buffer.from(request.seed).toString('hex'),
    m: request.method,
    q: request.query.toString(),
    ct: request.contentType,
    ce: request.contentEncoding,
    ip: request.ip,
    ua: request.userAgent,
    e: request.engage,
    d: deep,
    k: kind === 'recording' ? 'r' : undefined,
  }
  const json = Buffer.from(JSON.stringify(header), 'utf8')
  const length = Buffer.allocUnsafe(4)
  length.writeUInt32LE(json.length, 0)
  return [length, json, request.body]
}

const REDACTED_KEY = 'phx_redacted'

/**
 * The request as the log may keep it when a personal key authenticated it: never the key itself (the log is a file
 * on disk, and keys are stored only hashed). The record already names the project the key resolved to, which is all
 * a replay needs; the body is kept decoded (the JSON text capture parsed) with every occurrence of the key replaced,
 * and the query loses the parameters that described the original encoding or carried the key.
 */
export function withoutCredential(request: CaptureRequest, decodedText: string, key: string): CaptureRequest {
  const query = new URLSearchParams()
  for (const [name, value] of request.query) {
    if (name === 'data' || name === 'compression') continue
    query.append(name, value.includes(key) ? value.replaceAll(key, REDACTED_KEY) : value)
  }
  return {
    ...request,
    method: 'POST',
    body: Buffer.from(decodedText.replaceAll(key, REDACTED_KEY), 'utf8'),
    contentType: 'application/json',
    contentEncoding: null,
    query,
  }
}

export function decodeRecord(payload: Uint8Array): { projectId: number; request: CaptureRequest; deep: boolean | undefined; kind: RecordKind } {
  const buf = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength)
  const length = buf.readUInt32LE(0)
  const header = JSON.parse(buf.subarray(4, 4 + length).toString('utf8')) as Header
  return {
    projectId: header.p,
    deep: header.d,
    kind: header.k === 'r' ? 'recording' : 'events',
    request: {
      method: header.m,
      body: buf.subarray(4 + length),
      contentType: header.ct,
      contentEncoding: header.ce,
      query: new URLSearchParams(header.q),
      ip: header.ip,
      userAgent: header.ua,
      engage: header.e,
      receivedAt: header.t,
      seed: Buffer.from(header.s, 'hex'),
    },
  }
}

export function contextOf(request: CaptureRequest): CaptureContext {
  return {
    receivedAt: request.receivedAt,
    seed: request.seed,
    ip: request.ip,
    sentAtQuery: request.query.get('_'),
    engage: request.engage,
    userAgent: request.userAgent,
  }
}

/**
 * Decode and split a request (no key check): what capture does first, and replay does again. `deep`: what the
 * nesting scan below gave when capture ran it (the same text gives the same answer); a replay passes it and
 * skips the scan, and with it the value budget, which only capture enforces (an accepted request stays so).
 */
export function parseRequest(request: CaptureRequest, maxBytes: number, deep?: boolean) {
  const decoded = decodePayload(request, maxBytes, { payloadTooLarge: true })
  if (deep === undefined) {
    // a batch envelope adds two levels ({"batch": [event]}): deeper than that, each event is checked
    const wireBytes = request.body.length > 0 ? request.body.length : (request.query.get('data')?.length ?? 0)
    const budget = valuesBudget(wireBytes)
    const scan = scanJson(decoded.text, MAX_JSON_DEPTH + 2, budget)
    if (scan.tooManyValues) tooManyValues(budget)
    deep = scan.deep
  }
  const extracted = extractPayload(parseJson(decoded.text), decoded.form, request.query)
  return { ...extracted, depth: { check: deep, single: extracted.single, large: decoded.text.length > MAX_EVENT_BYTES / 3 }, encoding: decoded.encoding, via: decoded.via, text: decoded.text, decodedSize: decoded.text.length }
}
