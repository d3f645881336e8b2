// Dates for is_date_before / is_date_after / is_date_exact, as the Python server parses them.
//
// Instants are kept as (whole seconds since the epoch, microseconds), because Python datetimes carry
// microseconds and a JS Date only milliseconds.
//
// - Filter values: relative dates first (`relative_date_parse_for_feature_flag_matching`), then
//   `dateutil.parser.parse`, a naive result taken as UTC.
// - Property values: int/float (and bool, an int in Python) are Unix seconds; strings go through
//   dateutil, then float() as Unix seconds.
//
// dateutil itself is reimplemented in ./dateutil.ts.

import { daysInMonth, parseDateutil } from './python/dateutil'

export interface Instant {
  sec: number
  us: number
}

/** Thrown when Python would raise an exception the server does not catch (the flag then errors). */
export class PythonException extends Error {}

const MIN_SEC = -62135596800 // 0001-01-01T00:00:00Z
const MAX_SEC = 253402300799 // 9999-12-31T23:59:59Z

export function instantFromMs(ms: number): Instant {
  const sec = Math.floor(ms / 1000)
  return { sec, us: (ms - sec * 1000) * 1000 }
}

export function compareInstants(a: Instant, b: Instant): number {
  if (a.sec !== b.sec) return a.sec < b.sec ? -1 : 1
  if (a.us !== b.us) return a.us < b.us ? -1 : 1
  return 0
}

function roundHalfEven(v: number): number {
  const r = Math.round(v)
  return Math.abs(v - Math.trunc(v)) === 0.5 ? 2 * Math.round(v / 2) : r
}

/** datetime.fromtimestamp(x, tz=UTC); null where Python raises (out of range, NaN, infinity). */
export function instantFromUnixSeconds(x: number): Instant | null {
  if (!Number.isFinite(x)) return null
  let sec = Math.trunc(x)
  let us = roundHalfEven((x - sec) * 1e6)
  if (us >= 1e6) {
    us -= 1e6
    sec += 1
  } else if (us < 0) {
    us += 1e6
    sec -= 1
  }
  if (sec < MIN_SEC || sec > MAX_SEC) return null
  return { sec, us }
}

function utcMs(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const dt = new Date(0)
  dt.setUTCFullYear(y, mo - 1, d)
  dt.setUTCHours(h, mi, s, 0)
  return dt.getTime()
}

// ---- relative dates ----

const RELATIVE_RE = /^-?([0-9]+)([a-z])\n?$/ // Python `$` also matches before a final newline

/**
 * PostHog's relative date (`-7d`, `1m`, `2y`, …): the sign is ignored, units h/d/w are fixed
 * durations, m/y calendar months/years (the day clamped to the month's length, like relativedelta),
 * numbers of 10000 or more are not relative. Null when not relative or out of Python's year range.
 */
export function parseRelativeDate(value: string, now: Date): Date | null {
  const m = RELATIVE_RE.exec(value)
  if (!m) return null
  const n = parseInt(m[1]!, 10)
  if (n >= 10000) return null
  const nowMs = now.getTime()
  if (Number.isNaN(nowMs)) return null
  let ms: number
  switch (m[2]) {
    case 'h':
      ms = nowMs - n * 3600000
      break
    case 'd':
      ms = nowMs - n * 86400000
      break
    case 'w':
      ms = nowMs - n * 604800000
      break
    case 'm':
    case 'y': {
      const months = m[2] === 'm' ? n : n * 12
      const total = now.getUTCFullYear() * 12 + now.getUTCMonth() - months
      const year = Math.floor(total / 12)
      const month = total - year * 12 + 1
      if (year < 1 || year > 9999) return null
      const day = Math.min(now.getUTCDate(), daysInMonth(year, month))
      const d = new Date(nowMs)
      d.setUTCFullYear(year, month - 1, day)
      ms = d.getTime()
      break
    }
    default:
      return null
  }
  const out = new Date(ms)
  const y = out.getUTCFullYear()
  if (y < 1 || y > 9999) return null
  return out
}

// ---- dateutil ----

/** dateutil.parser.parse(s) made timezone-aware (naive → UTC); null when unparseable. */
export function parseDateString(s: string, now: Date): Instant | null {
  const p = parseDateutil(s, now)
  if (!p) return null
  const ms = utcMs(p.year, p.month, p.day, p.hour, p.minute, p.second)
  return { sec: ms / 1000 - (p.offsetSec ?? 0), us: p.microsecond }
}

// ISO 8601 as clients send it (what most date properties are): dateutil reads these exactly as written and
// independently of `now`, so they skip the general parser. Anything unusual goes the long way.
const ISO_RE = /^(\d{4})-(\d\d)-(\d\d)(?:[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?(Z|[+-]\d\d:?\d\d)?)?$/

/** A strict ISO 8601 date or date-time, as dateutil would give it; undefined when not of that form. */
export function parseIsoDate(s: string): Instant | undefined {
  if (s.length < 10 || s.length > 32) return undefined
  const m = ISO_RE.exec(s)
  if (!m) return undefined
  const year = +m[1]!
  const month = +m[2]!
  const day = +m[3]!
  const hour = m[4] === undefined ? 0 : +m[4]
  const minute = m[5] === undefined ? 0 : +m[5]
  const second = m[6] === undefined ? 0 : +m[6]
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) {
    return undefined
  }
  let offsetSec = 0
  const tz = m[8]
  if (tz !== undefined && tz !== 'Z') {
    const oh = +tz.slice(1, 3)
    const om = +tz.slice(tz.length - 2)
    if (oh > 23 || om > 59) return undefined
    offsetSec = (tz[0] === '-' ? -1 : 1) * (oh * 3600 + om * 60)
  }
  const us = m[7] === undefined ? 0 : +m[7].padEnd(6, '0')
  const ms = year >= 100 ? Date.UTC(year, month - 1, day, hour, minute, second) : utcMs(year, month, day, hour, minute, second)
  return { sec: ms / 1000 - offsetSec, us }
}

/** The filter side of a date operator: relative date, else dateutil; null when unparseable. */
export function parseFilterDate(text: string, now: Date): Instant | null {
  const rel = parseRelativeDate(text, now)
  if (rel) return instantFromMs(rel.getTime())
  return parseDateString(text, now)
}

/**
 * The property side (`determine_parsed_incoming_date`): numbers are Unix seconds, strings dateutil
 * then float() seconds. Returns null when unparseable; throws PythonException where Python's
 * `datetime.fromtimestamp` raises on a numeric value (the server does not catch that).
 */
export function parseIncomingDate(value: unknown, now: Date, pyFloatFromString: (s: string) => number | null): Instant | null {
  if (typeof value === 'number' || typeof value === 'boolean') {
    const inst = instantFromUnixSeconds(typeof value === 'boolean' ? (value ? 1 : 0) : value)
    if (!inst) throw new PythonException('timestamp out of range')
    return inst
  }
  if (typeof value === 'string') {
    const nowMs = now.getTime()
    if (cacheNowMs !== nowMs) {
      stringCache.clear()
      cacheNowMs = nowMs
    }
    const cached = stringCache.get(value)
    if (cached !== undefined) return cached
    let result = parseIsoDate(value) ?? parseDateString(value, now)
    if (!result) {
      const f = pyFloatFromString(value)
      result = f !== null ? instantFromUnixSeconds(f) : null
    }
    if (stringCache.size >= STRING_CACHE_MAX) stringCache.clear()
    stringCache.set(value, result)
    return result
  }
  return null
}

// The same property value is usually compared by several flags of one request (same `now`).
const STRING_CACHE_MAX = 1024
const stringCache = new Map<string, Instant | null>()
let cacheNowMs = NaN
