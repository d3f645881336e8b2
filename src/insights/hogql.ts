// The HogQL an insight runs, written from its parts. Every value a user sent reaches the text only through
// `literal`/`str` (quoted and escaped), every property name only through `prop`: the text is then parsed, checked and
// compiled for the store like any HogQL query, with the tenant condition, the dialect and the budgets it brings.
import { errors } from '../http/errors'
import { bucketIndexOfWall, type Bucket } from './buckets'
import type { Interval } from './date-range'
import { DAY_MS, offsetTransitions } from './timezone'

/** A HogQL string literal: backslashes and quotes escaped, control characters written as escapes. */
export function str(value: string): string {
  return `'${value.replace(/[\\'\n\r\t\0]/g, (c) => ({ '\\': '\\\\', "'": "\\'", '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0' })[c]!)}'`
}

/** A literal of a filter value: numbers and booleans as themselves, anything else as a string. */
export function literal(value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  return str(typeof value === 'string' ? value : JSON.stringify(value))
}

/** An event property's value (`NULL` when absent). */
export function prop(key: string): string {
  return `properties[${str(key)}]`
}

/** A UTC instant as a HogQL time literal. */
export function time(ms: number): string {
  return `toDateTime(${str(new Date(ms).toISOString())})`
}

/** The events of a time range, [from, to). */
export function inRange(from: number, to: number): string {
  return `timestamp >= ${time(from)} AND timestamp < ${time(to)}`
}

/** The events of one named event, or every event (null). */
export function isEvent(event: string | null | undefined): string | null {
  return event === null || event === undefined ? null : `event = ${str(event)}`
}

/** AND of the conditions that are not null ('true' when none). */
export function and(conditions: (string | null | undefined)[]): string {
  const present = conditions.filter((c): c is string => typeof c === 'string' && c !== '')
  return present.length === 0 ? 'true' : present.map((c) => `(${c})`).join(' AND ')
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
