// PostHog's dateRange ({date_from, date_to, explicitDate}) resolved to instants in the project's timezone.
import { errors } from '../http/errors'
import {
  addMonths,
  DAY_MS,
  HOUR_MS,
  isoLocal,
  wallFields,
  wallStartOfDay,
  wallStartOfMonth,
  wallStartOfWeek,
  wallTimeOf,
  wallToUtc,
} from '../lib/timezone'

export type Interval = 'hour' | 'day' | 'week' | 'month'

export interface DateRangeInput {
  date_from?: string | null
  date_to?: string | null
  explicitDate?: boolean | null
}

export interface DateRangeContext {
  now: number
  timezone: string
  interval: Interval
  /** 0 Sunday (default), 1 Monday: where `wStart` falls */
  weekStartDay?: number
  /** the project's first event, for `all`; without one, 2015-01-01 (as PostHog) */
  firstEventAt?: number | null
}

/** Events e with from <= e.timestamp < to; date_from/date_to as PostHog answers them in `resolved_date_range`. */
export interface ResolvedDateRange {
  from: number
  to: number
  date_from: string
  date_to: string
}

export const DEFAULT_DATE_FROM = '-7d'
/** Inputs longer than this are refused before they are parsed. */
const MAX_INPUT_LENGTH = 64
// ClickHouse's DateTime holds 1970-2105; a range outside these years is a mistake, not a question
const EARLIEST_WALL = Date.UTC(1970, 0, 1)
const LATEST_WALL = Date.UTC(2100, 0, 1)
const ALL_FALLBACK_WALL = Date.UTC(2015, 0, 1)

const RELATIVE = /^-?(\d{1,5})?([hdwmqy])(Start|End)?$/
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|[+-]\d{2}:?\d{2})?$/

export type Unit = 'h' | 'd' | 'w' | 'm' | 'q' | 'y'

/** A parsed end of the range: a wall time, and whether it already is a unit's exclusive end (`…End`). */
interface Point {
  wall: number
  unit: Unit | null
  /** `End`: wall is the first instant after the unit */
  end: boolean
}

function invalid(detail: string): Error {
  return errors.validation('invalid_date_range', detail, 'dateRange')
}

/** The local wall time truncated to the start of its hour, day, week, month, quarter or year. */
export function startOfUnit(wall: number, unit: Unit, weekStartDay: number): number {
  switch (unit) {
    case 'h':
      return Math.floor(wall / HOUR_MS) * HOUR_MS
    case 'd':
      return wallStartOfDay(wall)
    case 'w':
      return wallStartOfWeek(wall, weekStartDay)
    case 'm':
      return wallStartOfMonth(wall)
    case 'q': {
      const { year, month } = wallFields(wall)
      return Date.UTC(year, month - (month % 3), 1)
    }
    case 'y':
      return Date.UTC(wallFields(wall).year, 0, 1)
  }
}

/** A wall time moved by whole units (hours and days exactly, months and longer on the calendar). */
export function addUnits(wall: number, unit: Unit, count: number): number {
  switch (unit) {
    case 'h':
      return wall + count * HOUR_MS
    case 'd':
      return wall + count * DAY_MS
    case 'w':
      return wall + count * 7 * DAY_MS
    case 'm':
      return addMonths(wall, count)
    case 'q':
      return addMonths(wall, 3 * count)
    case 'y':
      return addMonths(wall, 12 * count)
  }
}

function parseRelative(text: string, match: RegExpExecArray, ctx: DateRangeContext): Point {
  const [, digits, unit, position] = match as unknown as [string, string | undefined, Unit, 'Start' | 'End' | undefined]
  if (digits === undefined && !position) throw invalid(`"${text}" is not a date: write e.g. "-7d", "mStart" or "2024-01-31".`)
  const count = Number(digits ?? 0)
  const weekStartDay = ctx.weekStartDay ?? 0
  // hours are real hours (-24h is 24 hours ago across a clock change); days and longer are calendar steps
  const wall = unit === 'h' ? wallTimeOf(ctx.timezone, ctx.now - count * HOUR_MS) : addUnits(wallTimeOf(ctx.timezone, ctx.now), unit, -count)
  if (!position) return { wall, unit, end: false }
  const start = startOfUnit(wall, unit, weekStartDay)
  return position === 'Start' ? { wall: start, unit, end: false } : { wall: addUnits(start, unit, 1), unit, end: true }
}

/** An ISO date or date-time; without an offset it is read in the project's timezone. */
function parseIso(text: string, match: RegExpExecArray, ctx: DateRangeContext): Point {
  const [, y, mo, d, h, mi, s, fraction, zone] = match
  const fields = [Number(y), Number(mo) - 1, Number(d), Number(h ?? 0), Number(mi ?? 0), Number(s ?? 0)] as const
  const ms = fraction ? Math.floor(Number(`0.${fraction}`) * 1000) : 0
  const asUtc = Date.UTC(...fields, ms)
  const check = new Date(asUtc)
  if (check.getUTCFullYear() !== fields[0] || check.getUTCMonth() !== fields[1] || check.getUTCDate() !== fields[2] || fields[3] > 23 || fields[4] > 59 || fields[5] > 59) {
    throw invalid(`"${text}" is not a valid date.`)
  }
  if (!zone) return { wall: asUtc, unit: h === undefined ? 'd' : null, end: false }
  // an explicit offset names an instant: seen from the project's timezone
  const digits = zone === 'Z' ? '+0000' : zone.replace(':', '')
  const offset = (digits[0] === '-' ? -1 : 1) * (Number(digits.slice(1, 3)) * HOUR_MS + Number(digits.slice(3, 5)) * 60_000)
  if (Number(digits.slice(1, 3)) > 14 || Number(digits.slice(3, 5)) > 59) throw invalid(`"${text}" has an invalid UTC offset.`)
  return { wall: wallTimeOf(ctx.timezone, asUtc - offset), unit: null, end: false }
}

function parsePoint(text: string, ctx: DateRangeContext): Point {
  if (text.length > MAX_INPUT_LENGTH) throw invalid(`A date is at most ${MAX_INPUT_LENGTH} characters.`)
  const trimmed = text.trim()
  const relative = RELATIVE.exec(trimmed)
  if (relative) return parseRelative(trimmed, relative, ctx)
  const iso = ISO.exec(trimmed)
  if (iso) return parseIso(trimmed, iso, ctx)
  throw invalid(`"${trimmed}" is not a date: write e.g. "-7d", "-24h", "mStart", "-1mStart", "yStart", "all" or "2024-01-31".`)
}

function withinYears(wall: number, which: string): void {
  if (!(wall >= EARLIEST_WALL && wall < LATEST_WALL)) throw invalid(`${which} must lie between 1970 and 2099.`)
}

function textOf(value: unknown, which: string): string | null {
  if (value === undefined || value === null || value === '') return null
  if (typeof value !== 'string') throw invalid(`${which} must be a string.`)
  return value
}

/**
 * The instants a dateRange covers in the project's timezone, as PostHog resolves them: date_from defaults to
 * "-7d" and date_to to now; unless `explicitDate`, date_from starts at the start of its day (of its hour for
 * "-Nh" or an hour interval) and date_to runs to the end of its day (of its hour for an hour interval).
 * `all` starts at the first event. Bad input throws a 400 with attr "dateRange".
 */
export function resolveDateRange(input: DateRangeInput, ctx: DateRangeContext): ResolvedDateRange {
  const explicit = input.explicitDate === true
  const hourly = ctx.interval === 'hour'
  const fromText = textOf(input.date_from, 'date_from') ?? DEFAULT_DATE_FROM
  const toText = textOf(input.date_to, 'date_to')

  let fromWall: number
  if (fromText.trim() === 'all') {
    fromWall = ctx.firstEventAt == null ? ALL_FALLBACK_WALL : wallTimeOf(ctx.timezone, ctx.firstEventAt)
    if (!explicit) fromWall = hourly ? Math.floor(fromWall / HOUR_MS) * HOUR_MS : wallStartOfDay(fromWall)
  } else {
    const point = parsePoint(fromText, ctx)
    fromWall = point.wall
    if (!explicit) fromWall = hourly || point.unit === 'h' ? Math.floor(fromWall / HOUR_MS) * HOUR_MS : wallStartOfDay(fromWall)
  }
  withinYears(fromWall, 'date_from')

  const toPoint: Point = toText === null ? { wall: wallTimeOf(ctx.timezone, ctx.now), unit: null, end: false } : parsePoint(toText, ctx)
  // the end as an exclusive wall time; `boundary`: it is the start of the next hour or day (shown as …:59.999999)
  let toWall: number
  let boundary: boolean
  if (explicit) {
    toWall = toPoint.end ? toPoint.wall : toPoint.wall + 1
    boundary = toPoint.end
  } else {
    // an `…End` point is the next unit's start: its last instant is the one before it
    const last = toPoint.end ? toPoint.wall - 1 : toPoint.wall
    toWall = hourly ? Math.floor(last / HOUR_MS) * HOUR_MS + HOUR_MS : wallStartOfDay(last) + DAY_MS
    boundary = true
  }
  withinYears(toWall - 1, 'date_to')

  const from = wallToUtc(ctx.timezone, fromWall)
  const to = wallToUtc(ctx.timezone, toWall)
  if (from >= to) throw invalid('date_from must be before date_to.')
  return {
    from,
    to,
    date_from: isoLocal(ctx.timezone, from),
    date_to: boundary ? isoLocal(ctx.timezone, to - 1, 999) : isoLocal(ctx.timezone, to - 1),
  }
}

/**
 * The range to compare with (`compareFilter`): by default the period of equal length just before it (equal in
 * local time, so a week before a clock change is still seven local days); with `compareTo` ("-1w", "-1m", …)
 * the range moved back by that much on the calendar.
 */
export function comparisonRange(range: ResolvedDateRange, timezone: string, compareTo?: string | null): ResolvedDateRange {
  const fromWall = wallTimeOf(timezone, range.from)
  const toWall = wallTimeOf(timezone, range.to)
  let previousFrom: number
  let previousTo: number
  if (compareTo) {
    if (compareTo.length > MAX_INPUT_LENGTH) throw invalid(`compare_to is at most ${MAX_INPUT_LENGTH} characters.`)
    const match = /^-(\d{1,5})([hdwmqy])$/.exec(compareTo.trim())
    if (!match) throw invalid(`compare_to "${compareTo}" is not a relative date: write e.g. "-1w" or "-1m".`)
    const [, digits, unit] = match as unknown as [string, string, Unit]
    previousFrom = addUnits(fromWall, unit, -Number(digits))
    previousTo = addUnits(toWall, unit, -Number(digits))
  } else {
    previousFrom = fromWall - (toWall - fromWall)
    previousTo = fromWall
  }
  withinYears(previousFrom, 'The compared period')
  const from = wallToUtc(timezone, previousFrom)
  const to = wallToUtc(timezone, previousTo)
  const boundary = range.date_to.includes('.999999')
  return {
    from,
    to,
    date_from: isoLocal(timezone, from),
    date_to: boundary ? isoLocal(timezone, to - 1, 999) : isoLocal(timezone, to - 1),
  }
}
