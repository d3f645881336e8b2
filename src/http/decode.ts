// Raw request payloads to JSON text, the way PostHog's clients send them: plain JSON, gzip (by header,
// by ?compression=gzip|gzip-js, or by its magic bytes alone), lz-string base64, base64, form `data=`
// and GET `data=`. Every step is capped so a small body cannot expand past maxBytes.
import { gunzipSync } from 'node:zlib'
import { errors } from './errors'
import { decompressLz64, Lz64Error } from './lz64'

export interface RawPayload {
  method: string
  body: Uint8Array
  contentType: string | null
  contentEncoding: string | null
  query: URLSearchParams
}

export type Encoding = 'json' | 'gzip' | 'lz64' | 'base64'
export type Carrier = 'body' | 'form' | 'query'

export interface DecodedPayload {
  /** the JSON text */
  text: string
  /** form fields, when the payload came as application/x-www-form-urlencoded */
  form: URLSearchParams | null
  /** how the JSON was packed, and what carried it (for metrics) */
  encoding: Encoding
  via: Carrier
}

type Compression = 'gzip' | 'lz64' | 'base64' | 'none'

export function compressionHint(value: string | null | undefined): Compression {
  switch ((value ?? '').trim().toLowerCase()) {
    case 'gzip':
    case 'gzip-js':
      return 'gzip'
    case 'lz64':
    case 'lz-string':
      return 'lz64'
    case 'base64':
    case 'b64':
      return 'base64'
    default:
      return 'none'
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })
const BASE64_TEXT = /^[A-Za-z0-9+/=\s]+$/

function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b
}

function firstNonSpace(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t' && c !== '\ufeff') return c
  }
  return ''
}

function malformed(detail: string): never {
  throw errors.validation('invalid_payload', `Malformed request data: ${detail}`)
}

/**
 * How many bytes of JSON one byte of a compressed payload (gzip, lz64) may become. Real batches compress a few
 * times over (a thousand identical events, some 60 times); a payload that expands more is a bomb: 12 KB of gzip
 * inflating to 3 million JSON values cost 270 ms of the request thread before its key could be checked. Small
 * payloads may always expand to MIN_EXPANDED_BYTES. Base64 and form encoding only ever shrink.
 */
export const MAX_EXPANSION = 100
export const MIN_EXPANDED_BYTES = 64 * 1024

/** The most a compressed payload of `inputBytes` may expand to, within the request cap. */
export function expansionCap(inputBytes: number, maxBytes: number): number {
  return Math.min(maxBytes, Math.max(inputBytes * MAX_EXPANSION, MIN_EXPANDED_BYTES))
}

/**
 * How a payload expanding past its cap is refused. Capture answers as PostHog's capture does: 413
 * `payload_too_large`, whichever cap it passed (the clients then send smaller batches, or drop the event);
 * elsewhere (/decide, /s/) the ratio's refusal is a 400 and the byte cap's a 413 `request_too_large`.
 */
export interface DecodeOptions {
  payloadTooLarge?: boolean
}

function expandedPastCap(what: string, cap: number, maxBytes: number, options: DecodeOptions): never {
  const detail = `${what} payload expands more than ${cap < maxBytes ? `${MAX_EXPANSION} times its size` : `${maxBytes} bytes`}.`
  if (options.payloadTooLarge) throw errors.payloadTooLarge(`Payload too large: the ${detail}`)
  if (cap < maxBytes) return malformed(detail)
  throw errors.tooLarge()
}

function gunzip(bytes: Uint8Array, maxBytes: number, options: DecodeOptions): Uint8Array {
  const cap = expansionCap(bytes.length, maxBytes)
  try {
    // maxOutputLength stops inflating as soon as the output passes the cap: a bomb costs at most the cap.
    return gunzipSync(bytes, { maxOutputLength: cap })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'ERR_BUFFER_TOO_LARGE' || error instanceof RangeError) return expandedPastCap('compressed', cap, maxBytes, options)
    return malformed(`Failed to decompress data. ${(error as Error).message}`)
  }
}

function text(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes)
  } catch {
    return malformed('invalid UTF-8 in request payload.')
  }
}

function base64Bytes(value: string): Uint8Array {
  // Form encoding turns '+' into ' '; PostHog's decoders turn it back.
  if (!/\s/.test(value)) return Buffer.from(value, 'base64')
  // One pass over the characters into bytes: a regex callback per whitespace character made 19 MB of padding
  // cost two seconds of the request thread, and string replacement half a second.
  const out = new Uint8Array(value.length)
  let n = 0
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c === 0x20) out[n++] = 0x2b
    else if (c > 0x20 || c < 0x09 || (c > 0x0d && c !== 0x20)) out[n++] = c
  }
  return Buffer.from(Buffer.from(out.buffer, 0, n).toString('latin1'), 'base64')
}

type Unwrapped = [text: string, encoding: Encoding]

/** Text that is not yet JSON: base64 of JSON or of gzip (possibly with a stale or missing hint). */
function unwrap(value: string, maxBytes: number, options: DecodeOptions, depth = 0): Unwrapped {
  const first = firstNonSpace(value)
  if (first === '{' || first === '[' || depth > 1) return [value, 'json']
  if (!BASE64_TEXT.test(value)) return [value, 'json']
  const bytes = base64Bytes(value)
  if (bytes.length === 0) return [value, 'json']
  if (isGzip(bytes)) return [text(gunzip(bytes, maxBytes, options)), 'gzip']
  let decoded: string
  try {
    decoded = utf8.decode(bytes)
  } catch {
    return [value, 'json'] // not base64 of text after all; let the JSON parser explain
  }
  const [inner] = unwrap(decoded, maxBytes, options, depth + 1)
  return [inner, 'base64']
}

function lz64(value: string, maxBytes: number, options: DecodeOptions): string {
  const input = value.replaceAll(' ', '+').trim()
  // the same ratio as gzip's (12 KB of lz64 decoding to 19 MB cost 100 ms of the request thread each)
  const cap = expansionCap(input.length, maxBytes)
  try {
    return decompressLz64(input, cap)
  } catch (error) {
    if (error instanceof Lz64Error && error.tooLarge) return expandedPastCap('lz64', cap, maxBytes, options)
    return malformed(`Failed to decompress data. ${(error as Error).message}`)
  }
}

function isForm(contentType: string | null, body: Uint8Array): boolean {
  // A JSON body sent with a form content type (curl -d does this) is still JSON.
  if (body[0] === 0x7b || body[0] === 0x5b) return false
  if (contentType && contentType.toLowerCase().startsWith('application/x-www-form-urlencoded')) return true
  // "data=" with no content type (or text/plain) is a form too: some clients send it that way.
  return (
    body.length > 5 &&
    body[0] === 0x64 && // d
    body[1] === 0x61 && // a
    body[2] === 0x74 && // t
    body[3] === 0x61 && // a
    body[4] === 0x3d // =
  )
}

function decodeString(value: string, compression: Compression, maxBytes: number, options: DecodeOptions): Unwrapped {
  if (compression === 'lz64') return [lz64(value, maxBytes, options), 'lz64']
  if (compression === 'gzip') {
    const bytes = base64Bytes(value)
    if (isGzip(bytes)) return [text(gunzip(bytes, maxBytes, options)), 'gzip']
  }
  return unwrap(value, maxBytes, options)
}

/** Decode a payload to JSON text; throws 400 invalid_payload / no_data or 413 (see DecodeOptions). */
export function decodePayload(raw: RawPayload, maxBytes: number, options: DecodeOptions = {}): DecodedPayload {
  if (raw.body.length > maxBytes) throw errors.tooLarge()
  const queryHint = raw.query.get('compression')
  const queryData = raw.query.get('data')

  if (raw.body.length === 0) {
    if (queryData) {
      const [json, encoding] = decodeString(queryData, compressionHint(queryHint), maxBytes, options)
      return { text: json, form: null, encoding, via: 'query' }
    }
    throw errors.validation(
      'no_data',
      'No data found. Make sure to use a POST request when sending the payload in the body of the request.',
    )
  }

  if (isForm(raw.contentType, raw.body)) {
    const form = new URLSearchParams(text(raw.body))
    const data = form.get('data')
    if (!data) {
      throw errors.validation(
        'no_data',
        'No data found. Make sure to use a POST request when sending the payload in the body of the request.',
      )
    }
    const compression = compressionHint(queryHint ?? form.get('compression') ?? raw.contentEncoding)
    const [json, encoding] = decodeString(data, compression, maxBytes, options)
    return { text: json, form, encoding, via: 'form' }
  }

  const compression = compressionHint(queryHint ?? raw.contentEncoding)
  if (isGzip(raw.body)) return { text: text(gunzip(raw.body, maxBytes, options)), form: null, encoding: 'gzip', via: 'body' }
  const body = text(raw.body)
  if (compression === 'lz64') return { text: lz64(body, maxBytes, options), form: null, encoding: 'lz64', via: 'body' }
  const [unwrapped, encoding] = unwrap(body, maxBytes, options)
  return { text: unwrapped, form: null, encoding, via: 'body' }
}

/**
 * How deep JSON may nest (PostHog's capture parses with serde_json, whose default limit is 128). Deeper values
 * are refused where they arrive: the stores, the serialiser and every walk over properties stay bounded.
 */
export const MAX_JSON_DEPTH = 128

/**
 * How many JSON values (and containers) one request may hold, whatever its size on the wire, and how many per
 * byte received when it came compressed. Parsing costs about 90 ns a value: a small compressed body must not
 * buy seconds of the request thread. A real batch holds a few dozen values per event, far below either bound.
 */
export const MAX_JSON_VALUES = 2_000_000
export const MAX_VALUES_PER_WIRE_BYTE = 4
export const MIN_VALUES_BUDGET = 10_000

/** The values a payload of `wireBytes` as received may decode to. */
export function valuesBudget(wireBytes: number): number {
  return Math.min(MAX_JSON_VALUES, Math.max(MIN_VALUES_BUDGET, wireBytes * MAX_VALUES_PER_WIRE_BYTE))
}

export interface JsonScan {
  /** nests deeper than the depth limit somewhere */
  deep: boolean
  /** holds more values than the value limit (the scan stopped there) */
  tooManyValues: boolean
}

/**
 * Depth and number of values of JSON text, without parsing it and without recursion: one pass that skips
 * strings with indexOf (most of the bytes), so it costs a fraction of JSON.parse. Values are counted as
 * separators and containers, which bounds them from above.
 */
export function scanJson(text: string, depthLimit: number, valueLimit = Infinity): JsonScan {
  let depth = 0
  let deep = false
  let values = 1
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      // to the closing quote: one preceded by an even number of backslashes
      for (;;) {
        const q = text.indexOf('"', i + 1)
        if (q < 0) return { deep, tooManyValues: false }
        let b = q - 1
        while (text.charCodeAt(b) === 92) b--
        i = q
        if ((q - 1 - b) % 2 === 0) break
      }
    } else if (c === 44) {
      if (++values > valueLimit) return { deep, tooManyValues: true }
    } else if (c === 123 || c === 91) {
      if (++depth > depthLimit) deep = true
      if (++values > valueLimit) return { deep, tooManyValues: true }
    } else if (c === 125 || c === 93) {
      depth--
    }
  }
  return { deep, tooManyValues: false }
}

/** Whether JSON text nests deeper than `limit` objects and arrays (see scanJson). */
export function jsonNestingExceeds(text: string, limit: number): boolean {
  return scanJson(text, limit).deep
}

/** The 400 for a payload holding more values than its budget. */
export function tooManyValues(budget: number): never {
  return malformed(`more than ${budget} JSON values for the request's size (at most ${MAX_VALUES_PER_WIRE_BYTE} per byte received, ${MAX_JSON_VALUES} in all).`)
}

/** Whether a parsed value nests deeper than `limit` (iteratively: the value may be a million levels deep). */
export function valueNestingExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (typeof v !== 'object' || v === null) continue
    if (depth > limit) return true
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
    }
  }
  return false
}

/** JSON.parse with PostHog's tolerance of NaN/Infinity (Python clients send them) and a helpful error. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    if (/\b(NaN|-?Infinity)\b/.test(text)) {
      try {
        return JSON.parse(text.replace(/([:[,]\s*)-?(?:NaN|Infinity)(?=\s*[,\]}])/g, '$1null'))
      } catch {
        // fall through to the original message
      }
    }
    const message = error instanceof RangeError ? 'nested too deeply' : (error as Error).message
    return malformed(`Invalid JSON: ${message}`)
  }
}
