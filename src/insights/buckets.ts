// Every bucket of a date range (zeros included), in the project's timezone, with PostHog's `days` and `labels`.
//
// A bucket holds every instant whose local wall time falls in its hour, day, week or month. So on the night the
// clocks go back the hour that happens twice is one bucket of two real hours, and the hour the clocks skip has
// no bucket (no instant belongs to it); days are 23 or 25 hours long on those dates.
import { errors } from '../http/errors'
import { startOfUnit, type Interval, type ResolvedDateRange, type Unit } from './date-range'
import { DAY_MS, HOUR_MS, isoDay, isoDayTime, wallFields, wallStartOfDay, wallTimeOf, wallToUtc } from '../lib/timezone'

/** Past this many buckets a range is refused: a larger interval answers the same question. */
export const MAX_BUCKETS = 10_000

export interface Bucket {
  /** the first instant counted in it (UTC ms): its local start, or the range's start for the first bucket */
  start: number
  /** the first instant after it (UTC ms): the next bucket's start, or the range's end for the last bucket */
  end: number
  /** its local start as a wall time (local date-time written as if UTC): what SQL truncating wall time yields */
  wallStart: number
  /** PostHog's `days` entry: `YYYY-MM-DD`, or `YYYY-MM-DD HH:MM:SS` for hours */
  day: string
  /** PostHog's `labels` entry: `1-Jan-2024`, `1-Jan 13:00`, `Jan 2024`, `7–13 Jan` */
  label: string
}

export interface BucketOptions {
  timezone: string
  /** 0 Sunday (default), 1 Monday */
  weekStartDay?: number
  maxBuckets?: number
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/** A bucket's interval as the unit its start is truncated to. */
const UNIT_OF: Record<Interval, Unit> = { hour: 'h', day: 'd', week: 'w', month: 'm' }

function truncate(wall: number, interval: Interval, weekStartDay: number): number {
  return startOfUnit(wall, UNIT_OF[interval], weekStartDay)
}

function next(wall: number, interval: Interval): number {
  switch (interval) {
    case 'hour':
      return wall + HOUR_MS
    case 'day':
      return wall + DAY_MS
    case 'week':
      return wall + 7 * DAY_MS
    case 'month': {
      const { year, month } = wallFields(wall)
      return Date.UTC(year, month + 1, 1)
    }
  }
}

/** About how many buckets a span holds, before any is made (months counted as 28 days: an upper bound). */
function estimate(fromWall: number, toWall: number, interval: Interval): number {
  const unit = { hour: HOUR_MS, day: DAY_MS, week: 7 * DAY_MS, month: 28 * DAY_MS }[interval]
  return Math.ceil((toWall - fromWall) / unit) + 1
}

function dayMonth(wall: number): string {
  const f = wallFields(wall)
  return `${f.day}-${MONTHS[f.month]}`
}

/** A week's label, its days clipped to the range: `7–13 Jan`, `28 Jan–3 Feb`, `29 Dec 2024–4 Jan 2025`, `7 Jan`. */
function weekLabel(firstWall: number, lastWall: number): string {
  const a = wallFields(firstWall)
  const b = wallFields(lastWall)
  if (a.year === b.year && a.month === b.month && a.day === b.day) return `${a.day} ${MONTHS[a.month]}`
  if (a.year !== b.year) return `${a.day} ${MONTHS[a.month]} ${a.year}–${b.day} ${MONTHS[b.month]} ${b.year}`
  if (a.month !== b.month) return `${a.day} ${MONTHS[a.month]}–${b.day} ${MONTHS[b.month]}`
  return `${a.day}–${b.day} ${MONTHS[a.month]}`
}

function labelOf(interval: Interval, wallStart: number, clipFirstWall: number, clipLastWall: number): string {
  const f = wallFields(wallStart)
  switch (interval) {
    case 'hour':
      return `${dayMonth(wallStart)} ${String(f.hour).padStart(2, '0')}:00`
    case 'day':
      return `${dayMonth(wallStart)}-${f.year}`
    case 'week':
      return weekLabel(clipFirstWall, clipLastWall)
    case 'month':
      return `${MONTHS[f.month]} ${f.year}`
  }
}

/**
 * Every bucket of the range in order, empty ones included. The first and last are clipped to the range (their
 * `start`/`end`, and a week's label), their `day` is the bucket's own start, as PostHog's. More than `maxBuckets`
 * (MAX_BUCKETS) is a 400 asking for a larger interval.
 */
export function buckets(range: Pick<ResolvedDateRange, 'from' | 'to'>, interval: Interval, options: BucketOptions): Bucket[] {
  const { timezone } = options
  const weekStartDay = options.weekStartDay ?? 0
  const maxBuckets = options.maxBuckets ?? MAX_BUCKETS
  const fromWall = wallTimeOf(timezone, range.from)
  const lastWall = wallTimeOf(timezone, range.to - 1)
  const count = estimate(fromWall, lastWall, interval)
  if (count > maxBuckets) {
    throw errors.validation(
      'too_many_buckets',
      `This date range holds about ${count.toLocaleString('en-US')} ${interval} buckets, more than ${maxBuckets.toLocaleString('en-US')}: pick a larger interval or a shorter range.`,
      'interval',
    )
  }
  const result: Bucket[] = []
  for (let wall = truncate(fromWall, interval, weekStartDay); wall <= lastWall; wall = next(wall, interval)) {
    const wallEnd = next(wall, interval)
    const start = Math.max(range.from, wallToUtc(timezone, wall))
    const end = Math.min(range.to, wallToUtc(timezone, wallEnd))
    // an hour the clocks skipped holds no instant
    if (end <= start) continue
    const clipFirst = Math.max(wall, wallStartOfDay(fromWall))
    const clipLast = Math.min(wallEnd - DAY_MS, wallStartOfDay(lastWall))
    result.push({
      start,
      end,
      wallStart: wall,
      day: interval === 'hour' ? isoDayTime(wall) : isoDay(wall),
      label: labelOf(interval, wall, clipFirst, clipLast),
    })
  }
  return result
}

/** Binary search: the index whose bucket `where` places at 0 (negative: before it, positive: after it), or -1. */
function search(list: readonly Bucket[], where: (bucket: Bucket) => number): number {
  let low = 0
  let high = list.length - 1
  while (low <= high) {
    const mid = (low + high) >> 1
    const side = where(list[mid])
    if (side < 0) high = mid - 1
    else if (side > 0) low = mid + 1
    else return mid
  }
  return -1
}

/** The index of the bucket holding this instant (binary search), or -1 outside the range. */
export function bucketIndexAt(list: readonly Bucket[], utcMs: number): number {
  return search(list, (bucket) => (utcMs < bucket.start ? -1 : utcMs >= bucket.end ? 1 : 0))
}

/** The index of the bucket whose local start is this wall time (what the SQL side groups by), or -1. */
export function bucketIndexOfWall(list: readonly Bucket[], wallStart: number): number {
  return search(list, (bucket) => Math.sign(wallStart - bucket.wallStart))
}
