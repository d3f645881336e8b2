// The private API's body parser: every body is read through readCappedBody (MAX_BODY_BYTES, the time limit and the
// bytes-in-flight budget, chunked bodies included) before anything decodes it, and JSON within the value budget.
// Elysia's own parsers read a chunked body whole, up to Bun's far larger limit, and parse any number of values.
import { errors } from './errors'
import { readCappedBody, type BodyLimits } from './body'
import { scanJson, valuesBudget } from './decode'

const decoder = new TextDecoder()

function isJson(contentType: string): boolean {
  return contentType === 'application/json' || contentType.endsWith('+json')
}

// A bare NaN, Infinity or -Infinity where a value belongs (not inside a string).
const NON_FINITE_VALUE = /[:[,]\s*-?(?:NaN|Infinity)\s*[,\]}]/
// A number that may be too large for a double (an exponent of three digits, or 309 digits in a row): JSON.parse
// reads 1e400 as Infinity. Only text holding one is walked for such values. A run of digits is matched from the
// character before it, so that each run is read once (\d{309} alone tried again at every digit: 1.5 s for 20 MB).
const HUGE_NUMBER = /\d[eE][+-]?\d\d\d|\D\d{309}/
const NOT_A_NUMBER = 'Malformed request body: NaN, Infinity and -Infinity are not JSON numbers.'

/** Whether a parsed value holds a number that is not finite somewhere (iteratively: the value may nest deeply). */
function holdsNonFinite(value: unknown): boolean {
  const stack = [value]
  while (stack.length > 0) {
    const v = stack.pop()
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return true
    } else if (typeof v === 'object' && v !== null) {
      for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push(child)
    }
  }
  return false
}

/**
 * JSON text parsed only when it holds no more values than its size allows (the scan costs a fraction of the parse).
 * Strict JSON: capture and /decide read NaN and Infinity as null for Python clients, but here a NaN would be stored
 * as 0 or null in a setting or a name the caller never meant to clear, so the body is refused instead (and so is a
 * number too large to be anything but Infinity).
 */
export function parseBoundedJson(text: string, wireBytes: number): unknown {
  const budget = valuesBudget(wireBytes)
  if (scanJson(text, Infinity, budget).tooManyValues) {
    throw errors.validation('parse_error', `Malformed request body: more than ${budget} JSON values for its size.`)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    if (NON_FINITE_VALUE.test(text)) throw errors.validation('parse_error', NOT_A_NUMBER)
    throw errors.validation('parse_error', 'Malformed request body.')
  }
  // 1e400 is JSON, and would arrive as Infinity all the same
  const huge = typeof value === 'number' ? !Number.isFinite(value) : HUGE_NUMBER.test(text) && holdsNonFinite(value)
  if (huge) throw errors.validation('parse_error', NOT_A_NUMBER)
  return value
}

/** A body sent without a JSON content type arrives as text: parsed here, within the same JSON value budget. */
export function untypedJsonBody(body: unknown): unknown {
  if (typeof body !== 'string') return body ?? {}
  return body.trim() === '' ? {} : parseBoundedJson(body, Buffer.byteLength(body))
}

const TRUE_TEXT = new Set(['true', 't', 'yes', 'y', 'on', '1'])
const FALSE_TEXT = new Set(['false', 'f', 'no', 'n', 'off', '0'])

/** A boolean query parameter as DRF reads one (true/True/1/yes/on, false/False/0/no/off); absent or empty: undefined. */
export function booleanParam(raw: string | undefined, attr: string): boolean | undefined {
  if (raw === undefined || raw === '') return undefined
  const text = raw.trim().toLowerCase()
  if (TRUE_TEXT.has(text)) return true
  if (FALSE_TEXT.has(text)) return false
  throw errors.validation('invalid', 'Must be a valid boolean.', attr)
}

/**
 * Form fields as Elysia gives them: one value as itself, repeated ones as a list, files as Blobs. One pass over the
 * entries: `getAll` for each distinct name scans them all, and a 1 MB form of 123,000 names took 57 s.
 */
export function formObject(form: Awaited<ReturnType<Response["formData"]>>): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null)
  for (const [key, value] of form.entries()) {
    const seen = out[key]
    if (seen === undefined) out[key] = value
    else if (Array.isArray(seen)) seen.push(value)
    else out[key] = [seen, value]
  }
  return { ...out }
}

/**
 * A request body for an Elysia parse hook. `address` says whose share of the in-flight budget it counts against.
 * Bodies with no content type are left as text (the routes that take them parse it themselves).
 */
export function cappedBodyParser(limits: BodyLimits) {
  return async (request: Request, contentType: string, address: string | null): Promise<unknown> => {
    const bytes = await readCappedBody(request, limits, address)
    // nothing sent: no body, as Elysia has it (a route's optional body stays undefined)
    if (bytes.byteLength === 0) return undefined
    if (isJson(contentType)) return parseBoundedJson(decoder.decode(bytes), bytes.byteLength)
    if (contentType === 'multipart/form-data' || contentType === 'application/x-www-form-urlencoded') {
      const form = await new Response(bytes, { headers: { 'content-type': request.headers.get('content-type') ?? contentType } }).formData().catch(() => {
        throw errors.validation('parse_error', 'Malformed request body.')
      })
      return formObject(form)
    }
    if (contentType === 'application/octet-stream') return bytes.buffer
    return decoder.decode(bytes)
  }
}
