// The sign-in body: JSON only (a form post is what a cross-site page can send without asking), read within a
// small cap whatever its framing (chunked included) and within the JSON value budget before it is parsed.
import { readCappedBody, type BodyLimits } from '../http/body'
import { MAX_JSON_DEPTH, parseJson, scanJson, tooManyValues, valuesBudget } from '../http/decode'
import { ApiError, errors } from '../http/errors'
import { LoginBody } from './model'

/** An email and a password fit in far less: a sign-in body is read up to this (or MAX_BODY_BYTES, if smaller). */
export const LOGIN_BODY_MAX_BYTES = 64 * 1024
/** The schema's bounds (model.ts): longer values are refused before any work is done on them. */
const MAX_EMAIL_CHARS = LoginBody.properties.email.maxLength!
const MAX_PASSWORD_CHARS = LoginBody.properties.password.maxLength!

export function isJsonContentType(value: string | null): boolean {
  const type = value?.split(';')[0].trim().toLowerCase()
  return type === 'application/json' || (type !== undefined && type.startsWith('application/') && type.endsWith('+json'))
}

function unsupportedMediaType(): ApiError {
  return new ApiError(415, 'invalid_request', 'unsupported_media_type', 'Sign in with a JSON body: Content-Type: application/json, {"email", "password"}.')
}

function field(data: Record<string, unknown>, name: string, max: number): string {
  const value = data[name]
  if (value === undefined || value === null) throw errors.validation('required', 'This field is required.', name)
  if (typeof value !== 'string' || value === '') throw errors.validation('invalid_input', 'A non-empty string is required.', name)
  if (value.length > max) throw errors.validation('max_length', `Ensure this field has no more than ${max} characters.`, name)
  return value
}

/**
 * {email, password} of a sign-in request: 415 unless JSON, 413 past the cap, 400 for anything else amiss. Its bytes
 * in flight count against `address`'s share (without it, every client's sign-ins shared one share).
 */
export async function readLoginBody(request: Request, limits: BodyLimits, address: string | null): Promise<{ email: string; password: string }> {
  if (!isJsonContentType(request.headers.get('content-type'))) throw unsupportedMediaType()
  const bytes = await readCappedBody(request, { ...limits, maxBytes: Math.min(limits.maxBytes, LOGIN_BODY_MAX_BYTES) }, address)
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw errors.invalidPayload('Malformed request data: the body is not UTF-8.')
  }
  const budget = valuesBudget(bytes.byteLength)
  const scan = scanJson(text, MAX_JSON_DEPTH, budget)
  if (scan.deep) throw errors.invalidPayload(`Malformed request data: JSON nested deeper than ${MAX_JSON_DEPTH} levels.`)
  if (scan.tooManyValues) tooManyValues(budget)
  const data = parseJson(text)
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw errors.invalidPayload('Malformed request data: expected a JSON object {"email", "password"}.')
  const record = data as Record<string, unknown>
  return { email: field(record, 'email', MAX_EMAIL_CHARS), password: field(record, 'password', MAX_PASSWORD_CHARS) }
}
