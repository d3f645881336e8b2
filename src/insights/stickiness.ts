// StickinessQuery: of the persons who did a series' event in the range, how many did it in exactly 1, 2, … N of its
// intervals (or in at least that many: cumulative). One statement per series and period: the store counts each
// person's intervals and then the persons per count, so the answer holds at most N + 1 rows whatever the traffic.
// Intervals are the project's local hours, days, weeks or months; with `intervalCount` they are groups of that
// many units counted back from date_to, as PostHog's.
import { buckets } from './buckets'
import { comparisonRange, startOfUnit, type Interval, type ResolvedDateRange } from './date-range'
import { errors } from '../http/errors'
import type { EntityMatch } from './entities'
import { and, bucketStart, inRange, localTime, time } from './hogql'
import type { StickinessQuery } from './model'
import type { InsightContext, KindAnswer } from './service'
import { MAX_RESULT_CELLS } from './trends'
import { wallFields, wallTimeOf, wallToUtc } from '../lib/timezone'

type StickinessSeries = StickinessQuery['series'][number]

const CRITERIA_OPERATORS = { gte: '>=', lte: '<=', exact: '=' } as const

export interface StickinessResult {
  action: Record<string, unknown>
  label: string
  count: number
  data: number[]
  days: number[]
  labels: string[]
  compare?: boolean
  compare_label?: 'current' | 'previous'
}

interface Plan {
  query: StickinessQuery
  interval: Interval
  global: string | null
  cumulative: boolean
  /** numbers the answer holds so far (MAX_RESULT_CELLS) */
  cells: number
}

/**
 * What identifies an event's interval (HogQL): its local hour, day, week or month; with `intervalCount` k, the
 * whole units from the event to date_to divided by k (PostHog counts them as ClickHouse's `age` does: full units,
 * date_to being the end of its day or hour), written with the functions every store has.
 */
function intervalKey(plan: Plan, from: number, to: number, ctx: InsightContext): string {
  const { timezone, weekStartDay } = ctx.project
  const count = plan.query.intervalCount
  if (count === undefined || count === null) return bucketStart(plan.interval, timezone, from, to, weekStartDay)
  const local = localTime(timezone, from, to)
  const lastWall = wallTimeOf(timezone, to - 1)
  if (plan.interval === 'hour') return stepped(`dateDiff('hour', toStartOfHour(${local}), ${time(startOfUnit(lastWall, 'h', weekStartDay))})`, count)
  const lastDay = time(startOfUnit(lastWall, 'd', weekStartDay))
  const days = `dateDiff('day', toStartOfDay(${local}), ${lastDay})`
  if (plan.interval === 'day') return stepped(days, count)
  if (plan.interval === 'week') return stepped(days, 7 * count)
  // a month is full when the event's day of the month is not after date_to's
  const lastDayOfMonth = wallFields(lastWall).day
  const months = `dateDiff('month', toStartOfMonth(${local}), ${lastDay}) - if(dateDiff('day', toStartOfMonth(${local}), toStartOfDay(${local})) > ${lastDayOfMonth - 1}, 1, 0)`
  return stepped(months, count)
}

/** The multiple of `step` at or below a whole number ≥ 0: the same key for every unit of one group. */
function stepped(units: string, step: number): string {
  return step === 1 ? `(${units})` : `((${units}) - (${units}) % ${step})`
}

function actionOf(series: StickinessSeries, order: number, entity: EntityMatch): Record<string, unknown> {
  return { order, type: entity.type, name: entity.name, id: entity.id, custom_name: series.custom_name ?? null }
}

async function seriesResult(plan: Plan, series: StickinessSeries, order: number, range: ResolvedDateRange, ctx: InsightContext): Promise<StickinessResult> {
  const { timezone, weekStartDay } = ctx.project
  const attr = `query__series__${order}`
  const list = buckets(range, plan.interval, { timezone, weekStartDay })
  const intervalCount = plan.query.intervalCount ?? 1
  const total = Math.ceil(list.length / intervalCount)
  // from the start of the interval holding date_from, as PostHog reads them
  const from = wallToUtc(timezone, list[0].wallStart)
  const entity = await ctx.entity(series, attr)
  const where = and([entity.condition, inRange(from, range.to), plan.global, await ctx.properties(series.properties, `${attr}__properties`), 'person_id IS NOT NULL'])
  const key = intervalKey(plan, from, range.to, ctx)
  const criteria = plan.query.stickinessFilter?.stickinessCriteria
  const perPerson = criteria
    ? `SELECT person_id, count() AS intervals FROM (SELECT person_id, ${key} AS period FROM events WHERE ${where} GROUP BY person_id, period HAVING count() ${CRITERIA_OPERATORS[criteria.operator]} ${criteria.value}) GROUP BY person_id`
    : `SELECT person_id, count(DISTINCT ${key}) AS intervals FROM events WHERE ${where} GROUP BY person_id`
  // a person counts in at most total + 1 groups (a week or month counted back from date_to may reach one more)
  const answer = await ctx.hogql(`SELECT intervals, count() AS persons FROM (${perPerson}) GROUP BY intervals ORDER BY intervals LIMIT ${total + 2}`)
  const found = answer.results.map((row) => [Number(row[0]), Number(row[1])] as const).filter(([n]) => Number.isInteger(n) && n >= 1)
  const length = Math.max(total, ...found.map(([n]) => n))
  plan.cells += length
  if (plan.cells > MAX_RESULT_CELLS) {
    throw errors.validation('too_many_results', `This answer would hold more than ${MAX_RESULT_CELLS.toLocaleString('en-US')} numbers: pick a larger interval, a shorter range or fewer series`, 'interval')
  }
  const exact = new Array<number>(length).fill(0)
  for (const [n, persons] of found) exact[n - 1] += persons
  const count = exact.reduce((a, b) => a + b, 0)
  // cumulative: persons active in at least n intervals
  const data = plan.cumulative ? exact.map((_, i) => exact.slice(i).reduce((a, b) => a + b, 0)) : exact
  const days = exact.map((_, i) => i + 1)
  const unit = plan.interval
  return {
    count,
    data,
    days,
    label: entity.name,
    labels: days.map((n) => `${n} ${unit}${n === 1 ? '' : 's'}${plan.cumulative ? ' or more' : ''}`),
    action: actionOf(series, order, entity),
  }
}

export async function runStickiness(query: StickinessQuery, ctx: InsightContext): Promise<KindAnswer> {
  const interval = query.interval ?? 'day'
  const plan: Plan = {
    query,
    interval,
    global: await ctx.properties(query.properties, 'query__properties'),
    cumulative: query.stickinessFilter?.computedAs === 'cumulative',
    cells: 0,
  }
  const range = await ctx.dateRange(query.dateRange, interval)
  const compare = query.compareFilter?.compare === true
  const previous = compare ? comparisonRange(range, ctx.project.timezone, query.compareFilter?.compare_to) : null
  const results: StickinessResult[] = []
  // one statement at a time: each holds a slot of the project's fair share
  for (const [order, series] of query.series.entries()) {
    const current = await seriesResult(plan, series, order, range, ctx)
    if (!previous) {
      results.push(current)
      continue
    }
    results.push({ ...current, compare: true, compare_label: 'current' })
    results.push({ ...(await seriesResult(plan, series, order, previous, ctx)), compare: true, compare_label: 'previous' })
  }
  return { body: { results }, range }
}
