// Property operators with the semantics of PostHog's Python `match_property` (server `/decide`), plus
// the stored-data rules for a property that is missing (or stored as JSON null).
import { compareInstants, type Instant, parseFilterDate, parseIncomingDate, PythonException } from './dates'
import { compilePythonRegex, sanitizeRegexPattern } from './python/pyregex'
import { sharedPythonRegex } from './shared-regex'
import type { LinearRegex } from './python/pyregex-re2'
import { booleanLikeFilterValue, compareCodePoints, parseFilterValue, pyFloat, pyFloatFromString, pyStr } from './python/pyvalue'

export const Op = {
  Exact: 0,
  IsNot: 1,
  IsSet: 2,
  IsNotSet: 3,
  IContains: 4,
  NotIContains: 5,
  Regex: 6,
  NotRegex: 7,
  Gt: 8,
  Gte: 9,
  Lt: 10,
  Lte: 11,
  DateBefore: 12,
  DateAfter: 13,
  DateExact: 14,
  Unknown: 15,
} as const
export type Op = (typeof Op)[keyof typeof Op]

const OPS: Record<string, Op> = {
  exact: Op.Exact,
  is_not: Op.IsNot,
  is_set: Op.IsSet,
  is_not_set: Op.IsNotSet,
  icontains: Op.IContains,
  not_icontains: Op.NotIContains,
  regex: Op.Regex,
  not_regex: Op.NotRegex,
  gt: Op.Gt,
  gte: Op.Gte,
  lt: Op.Lt,
  lte: Op.Lte,
  is_date_before: Op.DateBefore,
  is_date_after: Op.DateAfter,
  is_date_exact: Op.DateExact,
}

/** A filter compiled once per flag: everything that does not depend on the person is precomputed. */
export interface CompiledProperty {
  readonly key: string
  readonly op: Op
  /** `type: "cohort"`: membership of `cohortId` (`operator: "not_in"` negates it) */
  readonly isCohort: boolean
  /** `type: "flag"`: another flag's value in the same request (`key` is its id, `value` the expected value) */
  readonly isFlag: boolean
  /** cohort filters: the cohort id (a number or a numeric string), or null when unreadable (never matches) */
  readonly cohortId: number | null
  /** cohort filters: 'in' (also when no operator is given), 'not_in', or 'other' (never matches) */
  readonly cohortOperator: 'in' | 'not_in' | 'other'
  /** flag filters: the dependency's id, or null when the key is not an integer id */
  readonly dependencyId: number | null
  /** `negation: true` (honoured inside cohort definitions) */
  readonly negation: boolean
  /** `is_not` / `is_not_set` by the raw operator string (the pure-is_not rule reads it raw). */
  readonly negativeOperator: boolean
  readonly value: unknown
  /** str(value) and its lower-case form. */
  readonly valueStr: string
  readonly valueLower: string
  /** exact / is_not: the boolean the filter value means, or null when it is not boolean-like. */
  readonly exactBool: boolean | null
  /** exact / is_not with a list value: lower-cased str() of each element. */
  readonly exactList: readonly string[] | null
  /** regex / not_regex compiled with DOTALL | IGNORECASE after sanitize_regex_pattern; null = no match. */
  readonly regex: LinearRegex | null
  /** compiling the pattern raised something other than re.error in Python (evaluation error). */
  readonly regexRaises: boolean
  /** the raw pattern compiles (the stored-data path's is_valid_regex check). */
  readonly regexValidForMissing: boolean
  /** float(value), or null when Python's float() raises. */
  readonly numeric: number | null
  /** last parsed filter date, per `now` (relative dates and dateutil defaults depend on it). */
  dateCache: { nowMs: number; value: Instant | null } | null
}

/** Python truthiness of a JSON value. */
export function pyTruthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false
  if (Array.isArray(v)) return v.length > 0
  if (typeof v === 'object') return Object.keys(v).length > 0
  return true // non-zero numbers (NaN too), non-empty strings, true
}

function resolveOp(operator: unknown): Op {
  if (!pyTruthy(operator)) return Op.Exact // `property.operator or "exact"`
  if (typeof operator !== 'string') return Op.Unknown
  return Object.hasOwn(OPS, operator) ? OPS[operator]! : Op.Unknown
}

/** An id as flags and cohorts store it: a JSON integer or its decimal text (at most 9 digits, a Postgres integer). */
export function readId(v: unknown): number | null {
  if (typeof v === 'number') return Number.isInteger(v) && v >= 0 && v <= 999_999_999 ? v : null
  if (typeof v === 'string' && /^\d{1,9}$/.test(v.trim())) return Number(v.trim())
  return null
}

function cohortOperatorOf(operator: unknown): CompiledProperty['cohortOperator'] {
  if (operator === undefined || operator === null || operator === 'in') return 'in'
  return operator === 'not_in' ? 'not_in' : 'other'
}

/** Compile one property filter. Throws on a structurally broken filter (the caller marks the condition). */
export function compileProperty(raw: unknown): CompiledProperty {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Error('property filter is not an object')
  const p = raw as Record<string, unknown>
  // a dependency names its flag by id, which may come as a JSON number
  if (typeof p.key !== 'string' && !(p.type === 'flag' && typeof p.key === 'number')) throw new Error('property filter has no key')
  const key = String(p.key)
  const op = resolveOp(p.operator)
  const value = p.value
  const valueStr = pyStr(value)
  const valueLower = valueStr.toLowerCase()

  let exactBool: boolean | null = null
  let exactList: string[] | null = null
  if (op === Op.Exact || op === Op.IsNot) {
    exactBool = booleanLikeFilterValue(parseFilterValue(value))
    if (exactBool === null && Array.isArray(value)) exactList = value.map((v) => pyStr(v).toLowerCase())
  }

  let regex: LinearRegex | null = null
  let regexRaises = false
  let regexValidForMissing = true
  if (op === Op.Regex || op === Op.NotRegex) {
    const compiled = sharedPythonRegex(sanitizeRegexPattern(valueStr), { ignoreCase: true, dotAll: true })
    if (compiled.ok) regex = compiled.regex
    else if (compiled.reason === 'exception') regexRaises = true
    // is_valid_regex(str(_parse_value(value))) without flags, for a missing/null stored property
    const rawCheck = compilePythonRegex(pyStr(parseFilterValue(value)), { ignoreCase: false, dotAll: false })
    if (!rawCheck.ok) {
      if (rawCheck.reason === 'invalid') regexValidForMissing = false
      else if (rawCheck.reason === 'exception') regexRaises = true
    }
  }

  const numeric = op === Op.Gt || op === Op.Gte || op === Op.Lt || op === Op.Lte ? pyFloat(value) : null

  const isCohort = p.type === 'cohort'
  const isFlag = p.type === 'flag'
  return {
    key,
    op,
    isCohort,
    isFlag,
    cohortId: isCohort ? readId(value) : null,
    cohortOperator: cohortOperatorOf(p.operator),
    dependencyId: isFlag ? readId(p.key) : null,
    negation: p.negation === true,
    negativeOperator: p.operator === 'is_not' || p.operator === 'is_not_set',
    value,
    valueStr,
    valueLower,
    exactBool,
    exactList,
    regex,
    regexRaises,
    regexValidForMissing,
    numeric,
    dateCache: null,
  }
}

// The last strings lowered: the flags of a request compare a few of its properties (a plan, an email, a country)
// over and over, in turn; four remembered, replaced in turn.
const loweredFrom = ['', '', '', '']
const lowered = ['', '', '', '']
let nextLowered = 0

function lowerOf(v: unknown): string {
  if (typeof v !== 'string') return pyStr(v).toLowerCase()
  for (let i = 0; i < 4; i++) if (loweredFrom[i] === v) return lowered[i]
  const i = nextLowered
  nextLowered = (i + 1) & 3
  loweredFrom[i] = v
  return (lowered[i] = v.toLowerCase())
}

function exactMatch(p: CompiledProperty, v: unknown): boolean {
  const s = lowerOf(v)
  if (p.exactBool !== null) return s === (p.exactBool ? 'true' : 'false')
  if (p.exactList !== null) return p.exactList.includes(s)
  return s === p.valueLower
}

function compare(op: Op, c: number): boolean {
  switch (op) {
    case Op.Gt:
      return c > 0
    case Op.Gte:
      return c >= 0
    case Op.Lt:
      return c < 0
    default:
      return c <= 0
  }
}

function compareNumbers(op: Op, a: number, b: number): boolean {
  switch (op) {
    case Op.Gt:
      return a > b
    case Op.Gte:
      return a >= b
    case Op.Lt:
      return a < b
    default:
      return a <= b
  }
}

function filterDate(p: CompiledProperty, now: Date): Instant | null {
  const nowMs = now.getTime()
  const cache = p.dateCache
  if (cache !== null && cache.nowMs === nowMs) return cache.value
  const value = parseFilterDate(p.valueStr, now)
  p.dateCache = { nowMs, value }
  return value
}

/**
 * A property value larger than this (characters of a string; characters and elements of a list or dict) matches
 * no condition at all, negations included, as a regex subject over its limit already does: lowering,
 * stringifying or date-parsing a multi-megabyte value for every flag of every request is work no real property
 * needs (one such value cost 0.6–1.3 s a /decide).
 */
export const MAX_MATCHED_VALUE_CHARS = 65_536

/** What an oversized list or dict value from a request is replaced with (see boundedValue). */
export const OVERSIZED_VALUE: Readonly<Record<string, never>> = Object.freeze({})

/**
 * The value itself when it is within MAX_MATCHED_VALUE_CHARS, else OVERSIZED_VALUE; lists and dicts are walked
 * without recursion and only until the budget is spent, so a 3-million-element list costs 64 K steps here.
 */
export function boundedValue(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v
  let budget = MAX_MATCHED_VALUE_CHARS
  const stack: unknown[] = [v]
  while (stack.length > 0) {
    const item = stack.pop()
    budget -= 2
    if (typeof item === 'string') budget -= item.length
    else if (typeof item === 'object' && item !== null) {
      if (Array.isArray(item)) {
        if (item.length > budget) return OVERSIZED_VALUE
        for (const child of item) stack.push(child)
      } else {
        for (const key in item) {
          budget -= key.length
          stack.push((item as Record<string, unknown>)[key])
          if (budget < 0) return OVERSIZED_VALUE
        }
      }
    }
    if (budget < 0) return OVERSIZED_VALUE
  }
  return v
}

/**
 * `match_property` for a property whose key is present (override or stored value).
 * Throws PythonException where the server raises (the flag then errors).
 */
export function matchPresent(p: CompiledProperty, v: unknown, now: Date): boolean {
  if (v === OVERSIZED_VALUE || (typeof v === 'string' && v.length > MAX_MATCHED_VALUE_CHARS)) return false
  switch (p.op) {
    case Op.Exact:
      return exactMatch(p, v)
    case Op.IsNot:
      return !exactMatch(p, v)
    case Op.IsSet:
      return true
    case Op.IsNotSet:
      return false
    case Op.IContains:
      return lowerOf(v).includes(p.valueLower)
    case Op.NotIContains:
      return !lowerOf(v).includes(p.valueLower)
    case Op.Regex:
    case Op.NotRegex: {
      if (p.regexRaises) throw new PythonException('regex compilation raised')
      if (p.regex === null) return false
      const found = p.regex.test(pyStr(v))
      return p.op === Op.Regex ? found : !found
    }
    case Op.Gt:
    case Op.Gte:
    case Op.Lt:
    case Op.Lte: {
      if (p.numeric !== null && v !== null && v !== undefined) {
        if (typeof v === 'string') return compare(p.op, compareCodePoints(v, p.valueStr))
        if (typeof v === 'number') return compareNumbers(p.op, v, p.numeric)
        if (typeof v === 'boolean') return compareNumbers(p.op, v ? 1 : 0, p.numeric)
        throw new PythonException("'>' not supported between a list/dict and a float")
      }
      return compare(p.op, compareCodePoints(pyStr(v), p.valueStr))
    }
    case Op.DateBefore:
    case Op.DateAfter:
    case Op.DateExact: {
      const target = filterDate(p, now)
      if (target === null) return false
      const incoming = parseIncomingDate(v, now, pyFloatFromString)
      if (incoming === null) return false
      const c = compareInstants(incoming, target)
      return p.op === Op.DateBefore ? c < 0 : p.op === Op.DateAfter ? c > 0 : c === 0
    }
    default:
      return false
  }
}

/**
 * A stored property that is missing (`present=false`) or stored as JSON null (`present=true`):
 * the value operators fail and their negations pass; is_set treats a null as set.
 */
export function matchAbsent(p: CompiledProperty, storedNull: boolean): boolean {
  switch (p.op) {
    case Op.IsSet:
      return storedNull
    case Op.IsNotSet:
      return !storedNull
    case Op.IsNot:
    case Op.NotIContains:
      return true
    case Op.NotRegex:
      if (p.regexRaises) throw new PythonException('regex compilation raised')
      return p.regexValidForMissing
    default:
      if (p.op === Op.Regex && p.regexRaises) throw new PythonException('regex compilation raised')
      return false
  }
}
