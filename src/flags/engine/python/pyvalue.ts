// Python value semantics the server's `match_property` relies on: `str()`, `repr()`, `float()`,
// `Property._parse_value`, and code-point string ordering.
//
// JSON values only reach us through JSON.parse, so the value space is: string, number, boolean, null,
// arrays and plain objects (undefined is treated as Python None).
//
// Known limits (JS cannot see what Python sees):
// - JSON `1.0` and `1` are the same JS number. We treat integral numbers below 1e16 as Python ints, so
//   str(1.0) gives "1" here where Python gives "1.0"; from 1e16 up (beyond 2**53, where a JSON int has
//   lost its exact value in JS anyway) we print them as Python floats ("1e+16").
// - Object keys that look like array indexes are enumerated first by JS, so repr() of such a dict can
//   differ in key order from Python's insertion order.

/** Python's str.isspace() set (also what float() strips). */
export const PY_WHITESPACE_CLASS = '\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000'
const PY_STRIP_RE = new RegExp(`^[${PY_WHITESPACE_CLASS}]+|[${PY_WHITESPACE_CLASS}]+$`, 'g')

const NON_PRINTABLE_RE = /[\p{C}\p{Z}]/u

/** Python repr() of a string. */
export function pyReprString(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'"
  let out = quote
  for (const ch of s) {
    const cp = ch.codePointAt(0)!
    if (ch === quote || ch === '\\') out += '\\' + ch
    else if (ch === '\t') out += '\\t'
    else if (ch === '\n') out += '\\n'
    else if (ch === '\r') out += '\\r'
    else if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0')
    else if (cp < 0x7f) out += ch
    else if (ch !== ' ' && NON_PRINTABLE_RE.test(ch)) {
      if (cp <= 0xff) out += '\\x' + cp.toString(16).padStart(2, '0')
      else if (cp <= 0xffff) out += '\\u' + cp.toString(16).padStart(4, '0')
      else out += '\\U' + cp.toString(16).padStart(8, '0')
    } else out += ch
  }
  return out + quote
}

/** Python repr() of a number (integral numbers are taken to be ints, see the note above). */
export function pyReprNumber(x: number): string {
  if (Number.isNaN(x)) return 'nan'
  if (x === Infinity) return 'inf'
  if (x === -Infinity) return '-inf'
  // Every integral double of 1e16 or more is above 2**53, where a JSON int has lost precision in JS
  // anyway; print it as Python prints a float (scientific notation from 1e16 up).
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return String(x)
  if (Math.abs(x) < 1e-4 || Math.abs(x) >= 1e16) {
    // Python switches to scientific notation below 1e-4, with at least two exponent digits.
    const [mantissa, exp] = x.toExponential().split('e') as [string, string]
    const sign = exp.startsWith('-') ? '-' : '+'
    const digits = exp.replace(/^[+-]/, '')
    return `${mantissa}e${sign}${digits.padStart(2, '0')}`
  }
  return String(x)
}

/** Python repr() of a JSON value. */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None'
  if (v === true) return 'True'
  if (v === false) return 'False'
  if (typeof v === 'number') return pyReprNumber(v)
  if (typeof v === 'string') return pyReprString(v)
  if (typeof v === 'bigint') return v.toString()
  if (Array.isArray(v)) {
    let out = '['
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ', '
      out += pyRepr(v[i])
    }
    return out + ']'
  }
  if (typeof v === 'object') {
    let out = '{'
    let first = true
    for (const k of Object.keys(v)) {
      if (!first) out += ', '
      first = false
      out += pyReprString(k) + ': ' + pyRepr((v as Record<string, unknown>)[k])
    }
    return out + '}'
  }
  return String(v)
}

/** Python str() of a JSON value. */
export function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v)
}

// ---- float() ----

const digitValueCache = new Map<number, number>()
const ND_RE = /\p{Nd}/u

function unicodeDigitValue(cp: number): number {
  const cached = digitValueCache.get(cp)
  if (cached !== undefined) return cached
  // Unicode guarantees decimal digits come in contiguous runs of ten, 0 to 9.
  let start = cp
  while (start > 0 && ND_RE.test(String.fromCodePoint(start - 1))) start--
  const value = (cp - start) % 10
  digitValueCache.set(cp, value)
  return value
}

const NON_ASCII_DIGIT_RE = /[^\x00-\x7f]/
const ND_GLOBAL_RE = /\p{Nd}/gu
const PY_FLOAT_RE = /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/
const PY_FLOAT_SPECIAL_RE = /^([+-]?)(inf|infinity|nan)$/i

/** Python float(str): null when Python would raise ValueError. */
export function pyFloatFromString(input: string): number | null {
  let s = input
  if (NON_ASCII_DIGIT_RE.test(s)) {
    s = s.replace(ND_GLOBAL_RE, (d) => String(unicodeDigitValue(d.codePointAt(0)!)))
  }
  s = s.replace(PY_STRIP_RE, '')
  if (PY_FLOAT_RE.test(s)) return Number(s.includes('_') ? s.replace(/_/g, '') : s)
  const special = PY_FLOAT_SPECIAL_RE.exec(s)
  if (special) {
    if (special[2]!.toLowerCase() === 'nan') return NaN
    return special[1] === '-' ? -Infinity : Infinity
  }
  return null
}

/** Python float(x) for a JSON value: null when Python raises (TypeError or ValueError). */
export function pyFloat(v: unknown): number | null {
  if (typeof v === 'number') return v
  if (typeof v === 'boolean') return v ? 1 : 0
  if (typeof v === 'string') return pyFloatFromString(v)
  return null
}

// ---- Property._parse_value (convert_to_number=False) ----

/**
 * PostHog `Property._parse_value(value)`: "true"/"True" → true, "false"/"False" → false, numeric strings
 * stay strings, other strings are JSON-decoded when they decode, lists element-wise.
 */
export function parseFilterValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(parseFilterValue)
  if (value === 'true' || value === 'True') return true
  if (value === 'false' || value === 'False') return false
  if (typeof value !== 'string') return value // ints, floats, bools, None, dicts come back unchanged
  const asFloat = pyFloatFromString(value)
  if (asFloat !== null && Number.isFinite(asFloat)) return value
  if (asFloat !== null && Number.isNaN(asFloat)) return value
  try {
    const parsed: unknown = JSON.parse(value)
    if (typeof parsed === 'number' && !Number.isFinite(parsed)) return value
    return parsed
  } catch {
    return value
  }
}

/** Python `==` between a parsed JSON value and True/False (bool is an int: 1 == True, 0.0 == False). */
function pyEqualsBool(v: unknown, b: boolean): boolean {
  if (typeof v === 'boolean') return v === b
  if (typeof v === 'number') return v === (b ? 1 : 0)
  return false
}

/**
 * `is_truthy_or_falsy_property_value(parsed)` and, when it is one, whether it counts as true.
 * Returns null when the value is not boolean-like.
 */
export function booleanLikeFilterValue(parsed: unknown): boolean | null {
  if (parsed === true) return true
  if (parsed === false) return false
  if (typeof parsed === 'string') {
    if (parsed === 'true' || parsed === 'True') return true
    if (parsed === 'false' || parsed === 'False') return false
    return null
  }
  if (Array.isArray(parsed) && parsed.length === 1) {
    const e: unknown = parsed[0]
    if (e === 'true' || e === 'True' || pyEqualsBool(e, true)) return true
    // ["False"] is in the truthy-or-falsy tuple but not in the truthy one.
    if (e === 'false' || e === 'False' || pyEqualsBool(e, false)) return false
  }
  return null
}

// ---- ordering ----

/** Python string ordering (by code point); JS `<` orders by UTF-16 code unit. */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const ca = a.charCodeAt(i)
    const cb = b.charCodeAt(i)
    if (ca !== cb) {
      const pa = a.codePointAt(i)!
      const pb = b.codePointAt(i)!
      return pa < pb ? -1 : 1
    }
  }
  return a.length === b.length ? 0 : a.length < b.length ? -1 : 1
}
