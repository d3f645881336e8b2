// The HogQL an insight runs, written from its parts: the quoting of src/lib/hogql-text.ts (every user value a quoted
// literal), and what insights add to it — time ranges, local-time buckets, refusals by name.
import { errors } from '../http/errors'
import { time } from '../lib/hogql-text'
import { bucketIndexOfWall, type Bucket } from './buckets'
import type { Interval } from './date-range'
import { DAY_MS, offsetTransitions } from '../lib/timezone'

export { and, isEvent, literal, prop, str, time, userProp } from '../lib/hogql-text'

/**
 * The events of a time range, [from, to), on whole seconds: ClickHouse keeps seconds, so an end 1 ms past a second
 * (an explicit `date_to`, inclusive) must reach the next one for every store to count the same events.
 */
export function inRange(from: number, to: number): string {
  return `timestamp >= ${time(Math.floor(from / 1000) * 1000)} AND timestamp < ${time(Math.ceil(to / 1000) * 1000)}`
}

/**
 * `timestamp` as the project's wall-clock time: shifted by the UTC offset of the span it falls in (one span per clock
 * change in the range). The store's UTC truncation functions then cut local hours, days, weeks and months.
 */
export function localTime(timezone: string, from: number, to: number, column = 'timestamp'): string {
  const spans = offsetTransitions(timezone, from, to)
  const shifted = (offsetMs: number) => (offsetMs === 0 ? column : `${column} ${offsetMs < 0 ? '-' : '+'} INTERVAL ${Math.abs(offsetMs) / 1000} SECOND`)
  if (spans.length === 1) return shifted(spans[0].offsetMs)
  const whens = spans.slice(1).map((span, i) => `WHEN ${column} < ${time(span.fromUtc)} THEN ${shifted(spans[i].offsetMs)}`)
  return `CASE ${whens.join(' ')} ELSE ${shifted(spans[spans.length - 1].offsetMs)} END`
}

/**
 * The local bucket an event falls in, as the wall time of the bucket's start (read back with `bucketOfRow`).
 * Weeks: HogQL's toStartOfWeek starts on Sunday; a Monday week is the Sunday week of the day before, plus a day.
 */
export function bucketStart(interval: Interval, timezone: string, from: number, to: number, weekStartDay: number): string {
  const local = localTime(timezone, from, to)
  switch (interval) {
    case 'hour':
      return `toStartOfHour(${local})`
    case 'day':
      return `toStartOfDay(${local})`
    case 'week':
      return weekStartDay === 1 ? `toStartOfWeek(${local} - INTERVAL 1 DAY)` : `toStartOfWeek(${local})`
    case 'month':
      return `toStartOfMonth(${local})`
  }
}

/** The bucket index of a row's bucket start (as `bucketStart` gave it, an ISO string); -1 outside the range. */
export function bucketOfRow(list: readonly Bucket[], value: unknown, interval: Interval, weekStartDay: number): number {
  if (typeof value !== 'string') return -1
  let wall = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value)
  if (!Number.isFinite(wall)) return -1
  if (interval === 'week' && weekStartDay === 1) wall += DAY_MS
  return bucketIndexOfWall(list, wall)
}

/** Refused by name: what insights cannot answer (yet). */
export function unsupported(detail: string, attr: string): never {
  throw errors.validation('unsupported', detail, attr)
}
