// The retention table, pure: the periods of a RetentionQuery's range, and the cohort counts built person by person
// from the periods in which each person did the target event and the returning event.
import { buckets, type Bucket } from './buckets'
import { addUnits, startOfUnit, type Interval } from './date-range'
import { wallTimeOf, wallToUtc } from '../lib/timezone'

export type RetentionPeriod = 'Hour' | 'Day' | 'Week' | 'Month'

/** How many periods one table may have (cohorts); a longer range is refused before anything is read. */
export const MAX_RETENTION_PERIODS = 1_000

const UNIT = { hour: 'h', day: 'd', week: 'w', month: 'm' } as const


/**
 * The periods of the table, as PostHog sets them: the range ends with the period holding `date_to` (whole periods
 * only); it starts with the period holding `date_from` when one is given, else `totalIntervals` periods earlier.
 * `resolved`: the query's dateRange as the other kinds resolve it (its `to` is the end of date_to's day or hour).
 */
export function retentionPeriods(
  resolved: { from: number; to: number },
  options: { interval: Interval; totalIntervals: number; hasDateFrom: boolean; timezone: string; weekStartDay: number },
): Bucket[] {
  const { interval, timezone, weekStartDay } = options
  const unit = UNIT[interval]
  const endWall = addUnits(startOfUnit(wallTimeOf(timezone, resolved.to - 1), unit, weekStartDay), unit, 1)
  const startWall = options.hasDateFrom ? startOfUnit(wallTimeOf(timezone, resolved.from), unit, weekStartDay) : addUnits(endWall, unit, -options.totalIntervals)
  return buckets({ from: wallToUtc(timezone, startWall), to: wallToUtc(timezone, endWall) }, interval, { timezone, weekStartDay, maxBuckets: MAX_RETENTION_PERIODS })
}

/** counts[i][k]: persons of cohort i (period i) who came back in period i + k; counts[i][0] is the cohort's size. */
export type RetentionCounts = number[][]

export function emptyCounts(periods: number, lookahead: number): RetentionCounts {
  return Array.from({ length: periods }, () => new Array<number>(lookahead).fill(0))
}

/**
 * One person added to the table. `targets`: the periods (indexes) in which they did the target event, `returns`:
 * those in which they did the returning event. Recurring: a cohort for each target period; first time: only the
 * first one, and none when `firstTargetBeforeRange` (their first target event ever lies before the range).
 */
export function countPerson(
  counts: RetentionCounts,
  person: { targets: Iterable<number>; returns: ReadonlySet<number>; firstTargetBeforeRange?: boolean },
  firstTime: boolean,
): void {
  const periods = counts.length
  let cohorts = [...person.targets].filter((i) => i >= 0 && i < periods)
  if (firstTime) cohorts = person.firstTargetBeforeRange || cohorts.length === 0 ? [] : [Math.min(...cohorts)]
  for (const i of new Set(cohorts)) {
    const row = counts[i]
    row[0] += 1
    for (let k = 1; k < row.length && i + k < periods; k++) if (person.returns.has(i + k)) row[k] += 1
  }
}

export interface RetentionValue {
  count: number
  label: string
}

export interface RetentionRow {
  values: RetentionValue[]
  label: string
  date: string
}

/** PostHog's answer: one row per cohort (`Day 0`, `Day 1`…), each with `totalIntervals` values (`Day 0`…). */
export function retentionRows(counts: RetentionCounts, period: RetentionPeriod, dates: readonly string[]): RetentionRow[] {
  return counts.map((row, i) => ({
    values: row.map((count, k) => ({ count, label: `${period} ${k}` })),
    label: `${period} ${i}`,
    date: dates[i],
  }))
}
