// Request fields read as Django REST Framework reads them, shared by every REST capability so that the same
// mistake gets the same answer everywhere (`{"name": 123}` is the text "123" on flags and definitions alike).
import { errors } from './errors'

/** A UUID in its canonical text form (any case): event uuids, definition and key ids, organization ids. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A numeric id as a path carries it (at most 9 digits, so it fits Postgres's integer). */
export const NUMERIC_ID = /^\d{1,9}$/

function fail(code: string, detail: string, attr: string): never {
  throw errors.validation(code, detail, attr)
}

/** Postgres stores neither NUL characters nor unpaired UTF-16 surrogates (JSON allows both). */
export function storable(value: unknown): boolean {
  if (typeof value === 'string') return value.isWellFormed() && !value.includes('\0')
  if (Array.isArray(value)) return value.every(storable)
  if (value !== null && typeof value === 'object') return Object.entries(value).every(([k, v]) => storable(k) && storable(v))
  return true
}

export function assertStorable(value: unknown, attr: string): void {
  if (!storable(value)) fail('invalid_input', 'Null characters and unpaired surrogates are not allowed.', attr)
}

/** DRF CharField: strings (and numbers, as text), whitespace trimmed; what Postgres cannot store is refused. */
export function charField(value: unknown, attr: string, options: { allowBlank: boolean; maxLength?: number }): string {
  if (value === null) fail('null', 'This field may not be null.', attr)
  if (typeof value !== 'string' && (typeof value !== 'number' || !Number.isFinite(value))) fail('invalid_input', 'Not a valid string.', attr)
  const text = String(value).trim()
  if (!options.allowBlank && text === '') fail('blank', 'This field may not be blank.', attr)
  if (options.maxLength !== undefined && text.length > options.maxLength) {
    fail('max_length', `Ensure this field has no more than ${options.maxLength} characters.`, attr)
  }
  assertStorable(text, attr)
  return text
}
