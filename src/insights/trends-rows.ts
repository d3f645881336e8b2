// The trends maths no store aggregate answers alike: weekly and monthly active persons (distinct persons over the
// trailing 7 or 30 local days of each bucket) and the median and percentiles of a property (exact, interpolated
// linearly between the two nearest values). Each reads its rows from the query layer and counts in TypeScript,
// within a row cap: past it the question is refused by name rather than answered from part of the data.
import type { Bucket } from './buckets'
import type { ResolvedDateRange } from './date-range'
import { and, bucketOfRow, bucketStart, localTime, unsupported } from './hogql'
import type { InsightContext } from './service'
import { DAY_MS, wallStartOfDay, wallTimeOf } from '../lib/timezone'

/** Rows (person-days, or values) one series may read for these maths. */
export const MAX_MATH_ROWS = 50_000

export const ACTIVE_WINDOW_DAYS: Record<string, number> = { weekly_active: 7, monthly_active: 30 }
export const PERCENTILES: Record<string, number> = { median: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 }

/** The p-quantile of sorted values, linearly interpolated; 0 for none. */
export function quantile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0
  const at = (sorted.length - 1) * p
  const low = Math.floor(at)
  const high = Math.ceil(at)
  return sorted[low] + (sorted[high] - sorted[low]) * (at - low)
}

async function readCapped(ctx: InsightContext, text: string, attr: string): Promise<unknown[][]> {
  const answer = await ctx.hogql(`${text} LIMIT ${MAX_MATH_ROWS}`)
  if (answer.hasMore || answer.results.length >= MAX_MATH_ROWS) {
    unsupported(`This math reads more than ${MAX_MATH_ROWS} rows here: pick a shorter range or a simpler math`, attr)
  }
  return answer.results
}

/**
 * Weekly or monthly active persons per bucket: those with an event in the `windowDays` local days ending with the
 * bucket's day (the range read from that many days before it). `list` empty: one number over the whole range.
 */
export async function activePersons(
  ctx: InsightContext,
  where: (range: ResolvedDateRange) => string,
  range: ResolvedDateRange,
  list: readonly Bucket[],
  windowDays: number,
  attr: string,
): Promise<number[]> {
  const { timezone } = ctx.project
  const widened = { ...range, from: range.from - windowDays * DAY_MS - DAY_MS }
  const day = `toStartOfDay(${localTime(timezone, widened.from, widened.to)})`
  const rows = await readCapped(ctx, `SELECT person_id, ${day} AS day FROM events WHERE ${and([where(widened), 'person_id IS NOT NULL'])} GROUP BY person_id, day`, attr)
  const days = new Map<number, Set<string>>()
  for (const [person, dayText] of rows) {
    const wall = Date.parse(String(dayText))
    if (!Number.isFinite(wall)) continue
    const set = days.get(wall) ?? new Set<string>()
    set.add(String(person))
    days.set(wall, set)
  }
  // the window ending with each bucket's day (a day's hours share it), slid over the days in order: each person-day
  // is added and removed once, however many buckets and days the windows span
  const lastDays = list.length === 0 ? [wallStartOfDay(wallTimeOf(timezone, range.to - 1))] : list.map((bucket) => wallStartOfDay(bucket.wallStart))
  const wanted = [...new Set(lastDays)].sort((a, b) => a - b)
  const distinctEnding = new Map<number, number>()
  const inWindow = new Map<string, number>()
  const shift = (day: number, delta: 1 | -1) => {
    for (const person of days.get(day) ?? []) {
      const n = (inWindow.get(person) ?? 0) + delta
      if (n === 0) inWindow.delete(person)
      else inWindow.set(person, n)
    }
  }
  let added = Number.NEGATIVE_INFINITY // the last day added to the window
  for (const last of wanted) {
    const first = last - (windowDays - 1) * DAY_MS
    // days that left the window, then those that entered it (a gap wider than the window starts it afresh)
    if (added < first - DAY_MS) {
      inWindow.clear()
      added = first - DAY_MS
    } else for (let day = added - (windowDays - 1) * DAY_MS; day < first; day += DAY_MS) shift(day, -1)
    for (let day = added + DAY_MS; day <= last; day += DAY_MS) shift(day, 1)
    added = last
    distinctEnding.set(last, inWindow.size)
  }
  return lastDays.map((day) => distinctEnding.get(day) ?? 0)
}

/** A percentile of a property per bucket (or over the range when `list` is empty). */
export async function percentiles(
  ctx: InsightContext,
  where: string,
  range: ResolvedDateRange,
  list: readonly Bucket[],
  interval: Parameters<typeof bucketStart>[0],
  column: string,
  p: number,
  attr: string,
): Promise<number[]> {
  const { timezone, weekStartDay } = ctx.project
  const bucket = list.length === 0 ? 'NULL' : bucketStart(interval, timezone, range.from, range.to, weekStartDay)
  const rows = await readCapped(ctx, `SELECT ${bucket} AS bucket, ${column} AS value FROM events WHERE ${and([where, `${column} IS NOT NULL`])}`, attr)
  const values = Array.from({ length: Math.max(1, list.length) }, () => [] as number[])
  for (const [at, value] of rows) {
    const i = list.length === 0 ? 0 : bucketOfRow(list, at, interval, weekStartDay)
    const n = Number(value)
    if (i >= 0 && Number.isFinite(n)) values[i].push(n)
  }
  return values.map((v) => quantile(v.sort((a, b) => a - b), p))
}
