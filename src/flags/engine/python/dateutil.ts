// `dateutil.parser.parse(timestr)` (dateutil 2.8/2.9, default parserinfo: dayfirst=False,
// yearfirst=False, not fuzzy), written from its documented behaviour: the same tokenizer rules, the
// same numeric-token cases (YYYYMMDD, YYMMDD, HHMMSS, HH:MM:SS.ffffff, 12h/30m/5s, "12 am"), month
// and weekday names, AM/PM, time zone names and offsets (with the POSIX sign inversion of "GMT+3"),
// the year/month/day resolution, two-digit years and defaults taken from today.
//
// Limits: the server's local time zone is assumed to be UTC (its names count as UTC), digits other
// than Unicode decimal digits (e.g. superscripts) are not numbers, and offsets of a day or more are
// treated as unparseable (Python accepts them at parse time and raises when comparing).

export interface DateutilResult {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
  microsecond: number
  /** seconds east of UTC, or null for a naive result */
  offsetSec: number | null
}

class ParseError extends Error {}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

const JUMP = new Set([' ', '.', ',', ';', '-', '/', "'", 'at', 'on', 'and', 'ad', 'm', 't', 'of', 'st', 'nd', 'rd', 'th'])
const WEEKDAYS: Record<string, number> = {}
;[
  ['mon', 'monday'],
  ['tue', 'tuesday'],
  ['wed', 'wednesday'],
  ['thu', 'thursday'],
  ['fri', 'friday'],
  ['sat', 'saturday'],
  ['sun', 'sunday'],
].forEach((names, i) => names.forEach((n) => (WEEKDAYS[n] = i)))
const MONTHS: Record<string, number> = {}
;[
  ['jan', 'january'],
  ['feb', 'february'],
  ['mar', 'march'],
  ['apr', 'april'],
  ['may'],
  ['jun', 'june'],
  ['jul', 'july'],
  ['aug', 'august'],
  ['sep', 'sept', 'september'],
  ['oct', 'october'],
  ['nov', 'november'],
  ['dec', 'december'],
].forEach((names, i) => names.forEach((n) => (MONTHS[n] = i + 1)))
const HMS: Record<string, number> = { h: 0, hour: 0, hours: 0, m: 1, minute: 1, minutes: 1, s: 2, second: 2, seconds: 2 }
const AMPM: Record<string, number> = { am: 0, a: 0, pm: 1, p: 1 }
const UTC_ZONES = new Set(['UTC', 'GMT', 'Z', 'z'])

const lookup = (table: Record<string, number>, token: string | undefined): number | null => {
  if (token === undefined) return null
  const k = token.toLowerCase()
  return Object.hasOwn(table, k) ? table[k]! : null
}
const jump = (token: string | undefined): boolean => token !== undefined && JUMP.has(token.toLowerCase())

// ---- tokenizer (dateutil's _timelex) ----

const WORD_RE = /^\p{L}$/u
const SPACE_RE = /^[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]$/
const isWord = (c: string): boolean => WORD_RE.test(c)
const isNum = (c: string): boolean => c >= '0' && c <= '9'
const isSpace = (c: string): boolean => SPACE_RE.test(c)

function split(s: string): string[] {
  const chars = Array.from(s).filter((c) => c !== '\x00')
  const out: string[] = []
  let pos = 0
  while (pos < chars.length) {
    let token = chars[pos++]!
    let state: '' | 'a' | '0' | 'a.' | '0.' = ''
    let seenLetters = false
    if (isWord(token)) state = 'a'
    else if (isNum(token)) state = '0'
    else if (isSpace(token)) token = ' '
    if (state !== '') {
      while (pos < chars.length) {
        const c = chars[pos]!
        if (state === 'a') {
          seenLetters = true
          if (isWord(c)) token += c
          else if (c === '.') {
            token += c
            state = 'a.'
          } else break
        } else if (state === '0') {
          if (isNum(c)) token += c
          else if (c === '.' || (c === ',' && token.length >= 2)) {
            token += c
            state = '0.'
          } else break
        } else if (state === 'a.') {
          seenLetters = true
          if (c === '.' || isWord(c)) token += c
          else if (isNum(c) && token.endsWith('.')) {
            token += c
            state = '0.'
          } else break
        } else {
          if (c === '.' || isNum(c)) token += c
          else if (isWord(c) && token.endsWith('.')) {
            token += c
            state = 'a.'
          } else break
        }
        pos++
      }
    }
    if ((state === 'a.' || state === '0.') && (seenLetters || token.split('.').length > 2 || token.endsWith('.') || token.endsWith(','))) {
      // re.split("([.,])", token): keep the separators, drop empty pieces after the first
      const pieces = token.split(/([.,])/)
      out.push(pieces[0]!)
      for (const p of pieces.slice(1)) if (p) out.push(p)
      continue
    }
    if (state === '0.' && !token.includes('.')) token = token.replace(/,/g, '.')
    out.push(token)
  }
  return out
}

// ---- numbers ----

const DECIMAL_RE = /^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)$/

/** Python float() succeeds on a token (what makes dateutil treat it as numeric). */
function isFloatToken(t: string): boolean {
  return DECIMAL_RE.test(t) || /^(?:inf|infinity|nan)$/i.test(t)
}

/** Decimal(t) for a finite decimal; throws (ValueError) otherwise. */
function toDecimal(t: string | undefined): { int: number; frac: string } {
  if (t === undefined || !DECIMAL_RE.test(t)) throw new ParseError('Could not convert to decimal')
  const dot = t.indexOf('.')
  if (dot < 0) return { int: Number(t), frac: '' }
  return { int: dot === 0 ? 0 : Number(t.slice(0, dot)), frac: t.slice(dot + 1).replace(/0+$/, '') }
}

const decValue = (d: { int: number; frac: string }): number => (d.frac ? Number(`${d.int}.${d.frac}`) : d.int)

/** int(60 * (value % 1)) computed exactly. */
function sixtyTimesFraction(frac: string): number {
  return Number((60n * BigInt(frac)) / 10n ** BigInt(frac.length))
}

/** Python int(str) on a slice of a numeric token. */
function pyInt(s: string | undefined): number {
  if (s === undefined || !/^[0-9]+$/.test(s)) throw new ParseError('invalid literal for int()')
  return Number(s)
}

function parseMs(value: string): [number, number] {
  if (!value.includes('.')) return [pyInt(value), 0]
  const [i, f, ...rest] = value.split('.')
  if (rest.length) throw new ParseError('too many values to unpack')
  return [pyInt(i), pyInt(f!.padEnd(6, '0').slice(0, 6))]
}

// ---- year/month/day list (dateutil's _ymd) ----

class Ymd {
  vals: number[] = []
  century = false
  y: number | null = null
  m: number | null = null
  d: number | null = null

  get length(): number {
    return this.vals.length
  }

  append(val: string | number, label: 'Y' | 'M' | 'D' | null = null): void {
    let lab = label
    if (typeof val === 'string') {
      if (/^[0-9]+$/.test(val) && val.length > 2) {
        this.century = true
        lab = 'Y'
      }
      this.vals.push(pyInt(val))
    } else {
      if (val > 100) {
        this.century = true
        lab = 'Y'
      }
      this.vals.push(Math.trunc(val))
    }
    const idx = this.vals.length - 1
    if (lab === 'M') {
      if (this.m !== null) throw new ParseError('Month is already set')
      this.m = idx
    } else if (lab === 'D') {
      if (this.d !== null) throw new ParseError('Day is already set')
      this.d = idx
    } else if (lab === 'Y') {
      if (this.y !== null) throw new ParseError('Year is already set')
      this.y = idx
    }
  }

  couldBeDay(value: number): boolean {
    if (this.d !== null) return false
    if (this.m === null) return value >= 1 && value <= 31
    const month = this.vals[this.m]!
    if (month < 1 || month > 12) throw new ParseError('bad month')
    if (this.y === null) return value >= 1 && value <= daysInMonth(2000, month)
    return value >= 1 && value <= daysInMonth(this.vals[this.y]!, month)
  }

  private at(i: number): number {
    return this.vals[i < 0 ? this.vals.length + i : i]!
  }

  resolve(): [number | null, number | null, number | null] {
    const v = this.vals
    const n = v.length
    const strids: Record<string, number> = {}
    if (this.y !== null) strids.y = this.y
    if (this.m !== null) strids.m = this.m
    if (this.d !== null) strids.d = this.d
    const nStr = Object.keys(strids).length
    if ((n === nStr && n > 0) || (n === 3 && nStr === 2)) {
      if (n === 3 && nStr === 2) {
        const used = Object.values(strids)
        const missing = [0, 1, 2].find((x) => !used.includes(x))!
        const key = ['y', 'm', 'd'].find((k) => !(k in strids))!
        strids[key] = missing
      }
      const get = (k: string): number | null => (k in strids ? v[strids[k]!]! : null)
      return [get('y'), get('m'), get('d')]
    }
    const mi = this.m
    if (n > 3) throw new ParseError('More than three YMD values')
    if (n === 1 || (mi !== null && n === 2)) {
      let month: number | null = null
      let other: number
      if (mi !== null) {
        month = v[mi]!
        other = this.at(mi - 1)
      } else other = v[0]!
      if (n > 1 || mi === null) return other > 31 ? [other, month, null] : [null, month, other]
      return [null, month, null]
    }
    if (n === 2) {
      if (v[0]! > 31) return [v[0]!, v[1]!, null]
      if (v[1]! > 31) return [v[1]!, v[0]!, null]
      return [null, v[0]!, v[1]!]
    }
    if (n === 3) {
      const [a, b, c] = v as [number, number, number]
      if (mi === 0) return b > 31 ? [b, a, c] : [c, a, b]
      if (mi === 1) return a > 31 ? [a, b, c] : [c, b, a]
      if (mi === 2) return b > 31 ? [b, c, a] : [a, c, b]
      if (a > 31 || this.y === 0) return [a, b, c]
      if (a > 12) return [c, b, a]
      return [c, a, b]
    }
    return [null, null, null]
  }
}

// ---- the parser ----

interface Res {
  year: number | null
  month: number | null
  day: number | null
  weekday: number | null
  hour: number | null
  minute: number | null
  second: number | null
  microsecond: number | null
  tzname: string | null
  tzoffset: number | null
  ampm: number | null
}

function adjustAmpm(hour: number, ampm: number): number {
  if (hour < 12 && ampm === 1) return hour + 12
  if (hour === 12 && ampm === 0) return 0
  return hour
}

function couldBeTzname(res: Res, tzoffset: number | null, token: string): boolean {
  return res.hour !== null && res.tzname === null && tzoffset === null && Array.from(token).length <= 5 && (/^[A-Z]*$/.test(token) || UTC_ZONES.has(token))
}

function findHmsIdx(idx: number, tokens: string[]): number | null {
  const n = tokens.length
  if (idx + 1 < n && lookup(HMS, tokens[idx + 1]) !== null) return idx + 1
  if (idx + 2 < n && tokens[idx + 1] === ' ' && lookup(HMS, tokens[idx + 2]) !== null) return idx + 2
  if (idx > 0 && lookup(HMS, tokens[idx - 1]) !== null) return idx - 1
  if (idx > 1 && idx === n - 1 && tokens[idx - 1] === ' ' && lookup(HMS, tokens[idx - 2]) !== null) return idx - 2
  return null
}

function assignHms(res: Res, valueRepr: string, hms: number): void {
  const value = toDecimal(valueRepr)
  if (hms === 0) {
    res.hour = value.int
    if (value.frac) res.minute = sixtyTimesFraction(value.frac)
  } else if (hms === 1) {
    res.minute = value.int
    if (value.frac) res.second = sixtyTimesFraction(value.frac)
  } else if (hms === 2) {
    ;[res.second, res.microsecond] = parseMs(valueRepr)
  }
}

function parseNumericToken(tokens: string[], startIdx: number, ymd: Ymd, res: Res): number {
  let idx = startIdx
  const valueRepr = tokens[idx]!
  const value = toDecimal(valueRepr)
  const num = decValue(value)
  const lenLi = valueRepr.length
  const n = tokens.length
  const tok = (j: number): string => {
    if (j >= n) throw new ParseError('list index out of range')
    return tokens[j]!
  }
  if (ymd.length === 3 && (lenLi === 2 || lenLi === 4) && res.hour === null && (idx + 1 >= n || (tokens[idx + 1] !== ':' && lookup(HMS, tokens[idx + 1]) === null))) {
    // 19990101T23[59]
    res.hour = pyInt(valueRepr.slice(0, 2))
    if (lenLi === 4) res.minute = pyInt(valueRepr.slice(2))
  } else if (lenLi === 6 || (lenLi > 6 && valueRepr.indexOf('.') === 6)) {
    // YYMMDD or HHMMSS[.ss]
    if (ymd.length === 0 && !valueRepr.includes('.')) {
      ymd.append(valueRepr.slice(0, 2))
      ymd.append(valueRepr.slice(2, 4))
      ymd.append(valueRepr.slice(4))
    } else {
      res.hour = pyInt(valueRepr.slice(0, 2))
      res.minute = pyInt(valueRepr.slice(2, 4))
      ;[res.second, res.microsecond] = parseMs(valueRepr.slice(4))
    }
  } else if (lenLi === 8 || lenLi === 12 || lenLi === 14) {
    // YYYYMMDD[HHMM[SS]]
    ymd.append(valueRepr.slice(0, 4), 'Y')
    ymd.append(valueRepr.slice(4, 6))
    ymd.append(valueRepr.slice(6, 8))
    if (lenLi > 8) {
      res.hour = pyInt(valueRepr.slice(8, 10))
      res.minute = pyInt(valueRepr.slice(10, 12))
      if (lenLi > 12) res.second = pyInt(valueRepr.slice(12))
    }
  } else if (findHmsIdx(idx, tokens) !== null) {
    // HH[ ]h, MM[ ]m, SS[.ss][ ]s
    const hmsIdx = findHmsIdx(idx, tokens)!
    let hms: number
    if (hmsIdx > idx) {
      hms = lookup(HMS, tokens[hmsIdx])!
      idx = hmsIdx
    } else hms = lookup(HMS, tokens[hmsIdx])! + 1
    assignHms(res, valueRepr, hms)
  } else if (idx + 2 < n && tokens[idx + 1] === ':') {
    // HH:MM[:SS[.ss]]
    res.hour = value.int
    const mv = toDecimal(tokens[idx + 2])
    res.minute = mv.int
    if (mv.frac) res.second = sixtyTimesFraction(mv.frac)
    if (idx + 4 < n && tokens[idx + 3] === ':') {
      ;[res.second, res.microsecond] = parseMs(tokens[idx + 4]!)
      idx += 2
    }
    idx += 2
  } else if (idx + 1 < n && (tokens[idx + 1] === '-' || tokens[idx + 1] === '/' || tokens[idx + 1] === '.')) {
    const sep = tokens[idx + 1]
    ymd.append(valueRepr)
    if (idx + 2 < n && !jump(tokens[idx + 2])) {
      const t2 = tokens[idx + 2]!
      if (/^[0-9]+$/.test(t2)) ymd.append(t2)
      else {
        const mo = lookup(MONTHS, t2)
        if (mo === null) throw new ParseError('bad month')
        ymd.append(mo, 'M')
      }
      if (idx + 3 < n && tokens[idx + 3] === sep) {
        const t4 = tok(idx + 4)
        const mo = lookup(MONTHS, t4)
        if (mo !== null) ymd.append(mo, 'M')
        else ymd.append(t4)
        idx += 2
      }
      idx += 1
    }
    idx += 1
  } else if (idx + 1 >= n || jump(tokens[idx + 1])) {
    if (idx + 2 < n && lookup(AMPM, tokens[idx + 2]) !== null) {
      // 12 am
      res.hour = adjustAmpm(value.int, lookup(AMPM, tokens[idx + 2])!)
      idx += 1
    } else ymd.append(num)
    idx += 1
  } else if (lookup(AMPM, tokens[idx + 1]) !== null && num >= 0 && num < 24) {
    // 12am
    res.hour = adjustAmpm(value.int, lookup(AMPM, tokens[idx + 1])!)
    idx += 1
  } else if (ymd.couldBeDay(num)) {
    ymd.append(num)
  } else {
    throw new ParseError('unknown numeric token')
  }
  return idx
}

function parseTokens(timestr: string): { res: Res; ymd: Ymd } | null {
  const res: Res = { year: null, month: null, day: null, weekday: null, hour: null, minute: null, second: null, microsecond: null, tzname: null, tzoffset: null, ampm: null }
  const ymd = new Ymd()
  // Unicode decimal digits are digits to Python's isdigit()/int(); handle them as ASCII.
  const l = split(asciiDigits(timestr))
  const n = l.length
  const tok = (j: number): string => {
    if (j >= n) throw new ParseError('list index out of range')
    return l[j]!
  }
  try {
    let i = 0
    while (i < n) {
      const t = l[i]!
      if (isFloatToken(t)) {
        i = parseNumericToken(l, i, ymd, res)
      } else if (lookup(WEEKDAYS, t) !== null) {
        res.weekday = lookup(WEEKDAYS, t)
      } else if (lookup(MONTHS, t) !== null) {
        ymd.append(lookup(MONTHS, t)!, 'M')
        if (i + 1 < n) {
          if (l[i + 1] === '-' || l[i + 1] === '/') {
            // Jan-01[-99]
            const sep = l[i + 1]
            ymd.append(tok(i + 2))
            if (i + 3 < n && l[i + 3] === sep) {
              ymd.append(tok(i + 4))
              i += 2
            }
            i += 2
          } else if (i + 4 < n && l[i + 1] === ' ' && l[i + 3] === ' ' && l[i + 2]!.toLowerCase() === 'of') {
            // Jan of 01: 01 is clearly a year
            if (/^[0-9]+$/.test(l[i + 4]!)) ymd.append(String(convertYear(pyInt(l[i + 4]), false, currentYear)), 'Y')
            i += 4
          }
        }
      } else if (lookup(AMPM, t) !== null) {
        const value = lookup(AMPM, t)!
        if (res.hour === null) throw new ParseError('No hour specified with AM or PM flag.')
        if (res.hour < 0 || res.hour > 12) throw new ParseError('Invalid hour specified for 12-hour clock.')
        res.hour = adjustAmpm(res.hour, value)
        res.ampm = value
      } else if (couldBeTzname(res, res.tzoffset, t)) {
        res.tzname = t
        res.tzoffset = UTC_ZONES.has(t) ? 0 : null
        if (i + 1 < n && (l[i + 1] === '+' || l[i + 1] === '-')) {
          // "GMT+3" means "my time +3 is GMT": flip the sign
          l[i + 1] = l[i + 1] === '+' ? '-' : '+'
          res.tzoffset = null
          if (UTC_ZONES.has(t)) res.tzname = null
        }
      } else if (res.hour !== null && (t === '+' || t === '-')) {
        const signal = t === '+' ? 1 : -1
        const next = tok(i + 1)
        const lenLi = next.length
        let hourOffset: number
        let minOffset: number
        if (lenLi === 4) {
          hourOffset = pyInt(next.slice(0, 2))
          minOffset = pyInt(next.slice(2))
        } else if (i + 2 < n && l[i + 2] === ':') {
          hourOffset = pyInt(next)
          minOffset = pyInt(tok(i + 3))
          i += 2
        } else if (lenLi <= 2) {
          hourOffset = pyInt(next.slice(0, 2))
          minOffset = 0
        } else throw new ParseError(timestr)
        res.tzoffset = signal * (hourOffset * 3600 + minOffset * 60)
        // -0300 (BRST)
        if (i + 5 < n && jump(l[i + 2]) && l[i + 3] === '(' && l[i + 5] === ')' && Array.from(l[i + 4]!).length >= 3 && couldBeTzname(res, null, l[i + 4]!)) {
          res.tzname = l[i + 4]!
          i += 4
        }
        i += 1
      } else if (!jump(t)) {
        throw new ParseError(timestr)
      }
      i += 1
    }
    const [year, month, day] = ymd.resolve()
    res.year = year
    res.month = month
    res.day = day
  } catch {
    // dateutil's IndexError/ValueError give "Unknown string format"; PostHog catches anything else too
    return null
  }
  return { res, ymd }
}

let currentYear = new Date().getUTCFullYear()

function convertYear(year: number, centurySpecified: boolean, thisYear: number): number {
  if (year < 100 && !centurySpecified) {
    let y = year + Math.floor(thisYear / 100) * 100
    if (y >= thisYear + 50) y -= 100
    else if (y < thisYear - 50) y += 100
    return y
  }
  return year
}

let digitMap: Map<string, string> | null = null
function asciiDigits(s: string): string {
  if (!/[^\x00-\x7f]/.test(s)) return s
  return s.replace(/\p{Nd}/gu, (d) => {
    digitMap ??= new Map()
    let v = digitMap.get(d)
    if (v === undefined) {
      // decimal digits come in contiguous runs of ten, 0 to 9
      let start = d.codePointAt(0)!
      while (/\p{Nd}/u.test(String.fromCodePoint(start - 1))) start--
      v = String((d.codePointAt(0)! - start) % 10)
      digitMap.set(d, v)
    }
    return v
  })
}

/**
 * dateutil.parser.parse(timestr) with the default taken from `now` (today at midnight, UTC).
 * Null where dateutil raises.
 */
export function parseDateutil(timestr: string, now: Date): DateutilResult | null {
  currentYear = now.getUTCFullYear()
  const parsed = parseTokens(timestr)
  if (!parsed) return null
  const { res, ymd } = parsed
  // parserinfo.validate
  if (res.year !== null) res.year = convertYear(res.year, ymd.century, currentYear)
  if ((res.tzoffset === 0 && !res.tzname) || res.tzname === 'Z' || res.tzname === 'z') {
    res.tzname = 'UTC'
    res.tzoffset = 0
  } else if (res.tzoffset !== 0 && res.tzname && UTC_ZONES.has(res.tzname)) {
    res.tzoffset = 0
  }
  const filled = Object.values(res).some((v) => v !== null)
  if (!filled) return null // "String does not contain a date"
  // _build_naive with today's midnight as the default
  const year = res.year ?? now.getUTCFullYear()
  const month = res.month ?? now.getUTCMonth() + 1
  if (year < 1 || year > 9999 || month < 1 || month > 12) return null
  let day: number
  if (res.day === null) day = Math.min(now.getUTCDate(), daysInMonth(year, month))
  else day = res.day
  if (day < 1 || day > daysInMonth(year, month)) return null
  const hour = res.hour ?? 0
  const minute = res.minute ?? 0
  const second = res.second ?? 0
  const microsecond = res.microsecond ?? 0
  if (hour > 23 || minute > 59 || second > 59 || microsecond > 999999) return null
  let y = year
  let mo = month
  let d = day
  if (res.weekday !== null && !res.day) {
    // relativedelta(weekday=…): the next such weekday, today included
    const base = new Date(0)
    base.setUTCFullYear(y, mo - 1, d)
    const current = (base.getUTCDay() + 6) % 7 // Monday = 0
    base.setUTCDate(base.getUTCDate() + ((7 - current + res.weekday) % 7))
    y = base.getUTCFullYear()
    mo = base.getUTCMonth() + 1
    d = base.getUTCDate()
    if (y > 9999) return null
  }
  // _build_tzaware: UTC names are UTC, a known offset applies, anything else stays naive
  let offsetSec: number | null = null
  if (res.tzname && UTC_ZONES.has(res.tzname)) offsetSec = 0
  else if (res.tzoffset === 0) offsetSec = 0
  else if (res.tzoffset !== null) {
    if (Math.abs(res.tzoffset) >= 86400) return null
    offsetSec = res.tzoffset
  }
  return { year: y, month: mo, day: d, hour, minute, second, microsecond, offsetSec }
}
