// Client timestamps to epoch ms: RFC 3339 / ISO 8601 (a missing zone means UTC, "+HH" means "+HH:00"),
// date-only, epoch seconds or milliseconds, and whatever else Date.parse reads (RFC 2822).
const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?)?\s*(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/

export function parseTimestamp(value: unknown): number | null {
  if (typeof value === 'string') {
    const ms = parseCommonIso(value)
    if (ms !== undefined) return ms
  }
  return parseAnyTimestamp(value)
}

/** Every form parseTimestamp reads (the general path: exported so its tests can hold the fast path to it). */
export function parseAnyTimestamp(value: unknown): number | null {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null
    // Seconds until 5138 AD would exceed 1e11; anything larger is milliseconds.
    return Math.abs(value) < 1e11 ? Math.round(value * 1000) : Math.round(value)
  }
  if (typeof value !== 'string') return null
  const s = value.trim()
  if (s === '') return null
  const m = ISO.exec(s)
  if (m) {
    const [, y, mo, d, h = '0', mi = '0', sec = '0', frac = '', , sign, oh, om] = m
    const month = Number(mo)
    const day = Number(d)
    if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 24 || Number(mi) > 59 || Number(sec) > 60) return null
    const date = new Date(0)
    date.setUTCFullYear(Number(y), month - 1, day)
    date.setUTCHours(Number(h), Number(mi), Number(sec), frac ? Number(frac.slice(0, 3).padEnd(3, '0')) : 0)
    let ms = date.getTime()
    if (sign) ms -= (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om ?? 0)) * 60_000
    return Number.isNaN(ms) ? null : ms
  }
  if (/^-?\d+(\.\d+)?$/.test(s)) return parseAnyTimestamp(Number(s))
  const parsed = Date.parse(s)
  return Number.isNaN(parsed) ? null : parsed
}

// What clients send nearly always: "2024-06-01T12:00:00[.fff…](Z|±hh:mm|)" (JavaScript's toISOString, Python's
// isoformat). Read by character codes, with the start of the last day seen kept: no regular expression, no Date.
// Anything else, or a field out of its plain range, is left to the general path (undefined), which gives the
// same answer for everything this accepts.
let lastDayKey = -1
let lastDayMs = 0

/** The value of the two digits at i, or -1. */
function twoDigits(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48
  const b = s.charCodeAt(i + 1) - 48
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1
}

function parseCommonIso(s: string): number | undefined {
  const n = s.length
  if (n < 19 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45 || s.charCodeAt(10) !== 84 || s.charCodeAt(13) !== 58 || s.charCodeAt(16) !== 58) return undefined
  const century = twoDigits(s, 0)
  const yy = twoDigits(s, 2)
  const month = twoDigits(s, 5)
  const day = twoDigits(s, 8)
  const hour = twoDigits(s, 11)
  const minute = twoDigits(s, 14)
  const second = twoDigits(s, 17)
  // years before 1000 (Date.UTC reads 0–99 as 19xx) and the edge values are the general path's
  if (century < 10 || yy < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
    return undefined
  }
  let i = 19
  let millis = 0
  if (i < n && s.charCodeAt(i) === 46) {
    const start = ++i
    while (i < n) {
      const c = s.charCodeAt(i) - 48
      if (c < 0 || c > 9) break
      if (i - start < 3) millis = millis * 10 + c
      i++
    }
    if (i === start) return undefined
    for (let k = Math.min(i - start, 3); k < 3; k++) millis *= 10
  }
  let offsetMinutes = 0
  if (i < n) {
    const c = s.charCodeAt(i)
    if (c === 90 && i + 1 === n) {
      // Z
    } else if ((c === 43 || c === 45) && i + 6 === n && s.charCodeAt(i + 3) === 58) {
      const oh = twoDigits(s, i + 1)
      const om = twoDigits(s, i + 4)
      if (oh < 0 || om < 0) return undefined
      offsetMinutes = (c === 45 ? -1 : 1) * (oh * 60 + om)
    } else {
      return undefined
    }
  }
  const dayKey = ((century * 100 + yy) * 100 + month) * 100 + day
  if (dayKey !== lastDayKey) {
    lastDayMs = Date.UTC(century * 100 + yy, month - 1, day)
    lastDayKey = dayKey
  }
  return lastDayMs + ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000 + millis
}
