// A project's timezone over time, read from the runtime's own zone data through Intl.DateTimeFormat (no
// dependency): the UTC offset at an instant, the instants where it changes, and local wall time ↔ UTC.
//
// "Wall time" below is a local date and time written as epoch milliseconds as if it were UTC: 2024-03-10 02:30 in
// New York is Date.UTC(2024, 2, 10, 2, 30). Calendar arithmetic on wall times is plain UTC arithmetic.
import { errors } from '../http/errors'

export const HOUR_MS = 3_600_000
export const DAY_MS = 24 * HOUR_MS

const KNOWN_ZONES = new Set<string>([...Intl.supportedValuesOf('timeZone'), 'UTC'])

/** An IANA name the runtime knows (its canonical spelling: "Asia/Kolkata", not "Asia/Calcutta"), or "UTC". */
export function isKnownTimezone(name: string): boolean {
  return KNOWN_ZONES.has(name)
}

// One formatter per zone; the zones are the runtime's list, so the map stays small (a few hundred at most).
const formatters = new Map<string, Intl.DateTimeFormat>()

function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(zone)
  if (!formatter) {
    if (!KNOWN_ZONES.has(zone)) throw errors.validation('invalid_timezone', `"${zone.slice(0, 64)}" is not a known timezone.`, 'timezone')
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
    formatters.set(zone, formatter)
  }
  return formatter
}

/** The zone's offset at an instant as the runtime's zone data says it (one Intl call: a few microseconds). */
function intlOffset(zone: string, utcMs: number): number {
  const seconds = Math.floor(utcMs / 1000) * 1000
  const fields: Record<string, number> = {}
  for (const part of formatterOf(zone).formatToParts(seconds)) {
    if (part.type !== 'literal') fields[part.type] = Number(part.value)
  }
  const wall = Date.UTC(fields.year, fields.month - 1, fields.day, fields.hour, fields.minute, fields.second)
  return wall - seconds
}

/**
 * The first instant in (lo, hi] whose offset is the offset at hi, given that the offset at lo differs and
 * changes once in between (transitions are at whole seconds, so this is exact).
 */
function changeBetween(offset: (utcMs: number) => number, lo: number, hi: number): number {
  const target = offset(hi)
  let low = Math.floor(lo / 1000) // the offset differs at low
  let high = Math.ceil(hi / 1000) // the offset is target at high
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2)
    if (offset(mid * 1000) === target) high = mid
    else low = mid
  }
  return high * 1000
}

/** One stretch of constant offset: from `fromUtc` on (until the next entry), local time = UTC + `offsetMs`. */
export interface OffsetSpan {
  fromUtc: number
  offsetMs: number
}

// Offsets are sampled once a day, then each change found to the second: no zone has changed its offset twice
// within a day since 1970. A UTC year's spans are kept per zone (a few entries each; at most the runtime's zones ×
// 301 years, and in practice the years ranges may reach, 1970-2099); outside these years the zone data is read
// directly.
const SAMPLE_MS = DAY_MS
const FIRST_CACHED_YEAR = 1900
const LAST_CACHED_YEAR = 2200
const yearSpans = new Map<string, OffsetSpan[]>()

function spansOfYear(zone: string, year: number): OffsetSpan[] {
  const key = `${zone}\n${year}`
  let spans = yearSpans.get(key)
  if (spans) return spans
  const from = Date.UTC(year, 0, 1)
  const to = Date.UTC(year + 1, 0, 1)
  const offset = (t: number) => intlOffset(zone, t)
  spans = [{ fromUtc: from, offsetMs: offset(from) }]
  let previous = from
  let previousOffset = spans[0].offsetMs
  while (previous < to) {
    const next = Math.min(previous + SAMPLE_MS, to)
    const current = offset(next)
    if (current !== previousOffset) {
      const at = changeBetween(offset, previous, next)
      if (at < to) spans.push({ fromUtc: at, offsetMs: current })
    }
    previous = next
    previousOffset = current
  }
  yearSpans.set(key, spans)
  return spans
}

/** The zone's offset from UTC at this instant, in ms (New York in winter: -18,000,000). Whole seconds. */
export function offsetAt(zone: string, utcMs: number): number {
  if (zone === 'UTC') return 0
  const year = new Date(utcMs).getUTCFullYear()
  if (!(year >= FIRST_CACHED_YEAR && year <= LAST_CACHED_YEAR)) return intlOffset(zone, utcMs)
  const spans = spansOfYear(zone, year)
  let low = 0
  let high = spans.length - 1
  while (low < high) {
    const mid = (low + high + 1) >> 1
    if (spans[mid].fromUtc <= utcMs) low = mid
    else high = mid - 1
  }
  return spans[low].offsetMs
}

/** The local wall time of an instant. */
export function wallTimeOf(zone: string, utcMs: number): number {
  return utcMs + offsetAt(zone, utcMs)
}

/**
 * The offsets in force over [fromMs, toMs): the first entry starts at fromMs, each next one at a transition.
 *
 * Meant for the SQL side, which buckets in local time with the store's UTC functions: it shifts each timestamp
 * to wall time with the span it falls in, e.g. in ClickHouse
 *   `timestamp + toIntervalSecond(multiIf(timestamp < t1, o0, timestamp < t2, o1, o2))`
 * (t = fromUtc, o = offsetMs, in seconds; everything before t1 takes o0), truncates that with the UTC functions
 * (toStartOfDay, toStartOfMonth, toMonday in 'UTC'; weeks from Sunday, which 18.16 has no function for:
 * `toMonday(local + 86400) - 1`), and groups by it: the group key is the bucket's `wallStart` (buckets.ts), which
 * `bucketIndexOfWall` maps back to the bucket. test/integration/insight-buckets.contract.ts runs exactly this on
 * ClickHouse 18.16 and 26 against their own timezone functions; insight-buckets.embedded.test.ts on SQLite (a
 * CASE over epoch milliseconds, then strftime's 'start of day' / 'start of month').
 */
export function offsetTransitions(zone: string, fromMs: number, toMs: number): OffsetSpan[] {
  const spans: OffsetSpan[] = [{ fromUtc: fromMs, offsetMs: offsetAt(zone, fromMs) }]
  if (zone === 'UTC') return spans
  const lastYear = new Date(toMs).getUTCFullYear()
  for (let year = new Date(fromMs).getUTCFullYear(); year <= lastYear; year++) {
    const yearly = year >= FIRST_CACHED_YEAR && year <= LAST_CACHED_YEAR ? spansOfYear(zone, year) : []
    for (const span of yearly) {
      if (span.fromUtc > fromMs && span.fromUtc < toMs && span.offsetMs !== spans[spans.length - 1].offsetMs) spans.push(span)
    }
  }
  return spans
}

/**
 * The instant of a local wall time. Where the wall time exists twice (clocks set back), the earlier instant;
 * where it does not exist (clocks set forward past it), the instant the clocks jumped, i.e. the first instant
 * after it. So the start of a local day, hour or month is always the first instant that belongs to it, as
 * ClickHouse's toStartOfDay(…, zone) and PostHog's buckets count it.
 */
export function wallToUtc(zone: string, wallMs: number): number {
  if (zone === 'UTC') return wallMs
  // offsets a day either side bracket any instant this wall time could be (offsets stay within ±1 day)
  const before = offsetAt(zone, wallMs - DAY_MS)
  const after = offsetAt(zone, wallMs + DAY_MS)
  const candidates = before === after ? [wallMs - before] : [wallMs - before, wallMs - after].sort((a, b) => a - b)
  for (const instant of candidates) {
    if (instant + offsetAt(zone, instant) === wallMs) return instant
  }
  // a gap: wall times in it never happen; the jump happened between these two candidates
  return changeBetween((t) => offsetAt(zone, t), wallMs - after - 1000, wallMs - before)
}

/** The calendar fields of a wall time. */
export function wallFields(wallMs: number) {
  const d = new Date(wallMs)
  return {
    year: d.getUTCFullYear(),
    month: d.getUTCMonth(), // 0-11
    day: d.getUTCDate(),
    weekday: d.getUTCDay(), // 0 Sunday
    hour: d.getUTCHours(),
    minute: d.getUTCMinutes(),
    second: d.getUTCSeconds(),
    ms: d.getUTCMilliseconds(),
  }
}

/** The start of the local day holding a wall time. */
export function wallStartOfDay(wallMs: number): number {
  return Math.floor(wallMs / DAY_MS) * DAY_MS
}

/** The start of the local week holding a wall time (weeks start on weekStartDay: 0 Sunday, 1 Monday). */
export function wallStartOfWeek(wallMs: number, weekStartDay: number): number {
  const day = wallStartOfDay(wallMs)
  const back = (wallFields(day).weekday - weekStartDay + 7) % 7
  return day - back * DAY_MS
}

export function wallStartOfMonth(wallMs: number): number {
  const { year, month } = wallFields(wallMs)
  return Date.UTC(year, month, 1)
}

/** A wall time moved by whole months, the day kept within the target month (Mar 31 - 1 month = Feb 29 or 28). */
export function addMonths(wallMs: number, months: number): number {
  const f = wallFields(wallMs)
  const targetMonthStart = Date.UTC(f.year, f.month + months, 1)
  const { year, month } = wallFields(targetMonthStart)
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  return Date.UTC(year, month, Math.min(f.day, lastDay), f.hour, f.minute, f.second, f.ms)
}

/** "+05:30", "-04:00", or "Z" for UTC: how an offset is written in an ISO date. */
export function isoOffset(offsetMs: number): string {
  if (offsetMs === 0) return 'Z'
  const minutes = Math.round(Math.abs(offsetMs) / 60_000)
  const sign = offsetMs < 0 ? '-' : '+'
  return `${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0')

/** `YYYY-MM-DD` of a wall time. */
export function isoDay(wallMs: number): string {
  const f = wallFields(wallMs)
  return `${pad(f.year, 4)}-${pad(f.month + 1)}-${pad(f.day)}`
}

/** `YYYY-MM-DD HH:MM:SS` of a wall time. */
export function isoDayTime(wallMs: number): string {
  const f = wallFields(wallMs)
  return `${isoDay(wallMs)} ${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}`
}

/**
 * An instant as PostHog writes it in `resolved_date_range`: local time with the zone's offset,
 * `2024-03-10T00:00:00-05:00`; the fraction of a second is shown when not zero, in microseconds (PostHog's
 * end of a day is `23:59:59.999999`: pass the instant's ms and `extraMicroseconds` 999).
 */
export function isoLocal(zone: string, utcMs: number, extraMicroseconds = 0): string {
  const offset = offsetAt(zone, utcMs)
  const wall = utcMs + offset
  const micros = wallFields(wall).ms * 1000 + extraMicroseconds
  const fraction = micros > 0 ? `.${pad(micros, 6)}` : ''
  return `${isoDay(wall)}T${isoDayTime(wall).slice(11)}${fraction}${isoOffset(offset)}`
}
