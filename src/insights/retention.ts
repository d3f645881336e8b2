// RetentionQuery: of the persons who did the target event in a period (a cohort), how many did the returning event
// in each later period. The store answers one row per person and period (did they do either event in it), read in
// pages ordered by person; the table is counted person by person here (retention-table.ts). Rows read are capped.
import { errors } from '../http/errors'
import type { Bucket } from './buckets'
import type { Interval } from './date-range'
import { and, bucketOfRow, bucketStart, inRange, isEvent, str, time, unsupported } from './hogql'
import type { RetentionQuery } from './model'
import { countPerson, emptyCounts, retentionPeriods, retentionRows, type RetentionCounts, type RetentionPeriod } from './retention-table'
import type { InsightContext, KindAnswer } from './service'
import { isoLocal } from '../lib/timezone'

/** PostHog's default number of periods (and of values in each row). */
export const DEFAULT_TOTAL_INTERVALS = 11
/** Rows (person × period) one table may read; past it the question is refused, not answered in part. */
export const MAX_RETENTION_ROWS = 1_000_000
/** Rows one page asks for (a page ends with whole persons: a person has at most MAX_RETENTION_PERIODS rows). */
export const RETENTION_PAGE_ROWS = 50_000
/** Persons named in one IN list (first-time retention: who did the target event before the range). */
const PERSONS_PER_LOOKUP = 2_000

type Entity = NonNullable<RetentionQuery['retentionFilter']['targetEntity']>

const DEFAULT_ENTITY: Entity = { id: '$pageview', type: 'events' }

/** The condition an entity's events meet (`id` null: every event). */
async function entityCondition(entity: Entity, attr: string, ctx: InsightContext): Promise<string> {
  if (typeof entity.id === 'number') unsupported('Actions are not supported by retention yet: name an event', `${attr}__id`)
  return and([isEvent(entity.id), await ctx.properties(entity.properties, `${attr}__properties`)])
}

export interface RetentionLimits {
  pageRows: number
  maxRows: number
}

interface Plan {
  limits: RetentionLimits
  periods: Bucket[]
  interval: Interval
  weekStartDay: number
  lookahead: number
  firstTime: boolean
  target: string
  returning: string
  global: string | null
}

/** One page of a person's rows: the periods they did the target and the returning event in. */
interface PersonRows {
  targets: number[]
  returns: Set<number>
}

function tooMany(maxRows: number): never {
  throw errors.validation(
    'too_many_rows',
    `This retention reads more than ${maxRows.toLocaleString('en-US')} rows (persons × periods): pick a larger period, a shorter range or narrower filters.`,
    'query__retentionFilter',
  )
}

/** The persons of a page whose first target event ever lies before the range (first-time retention). */
async function targetedBefore(plan: Plan, persons: string[], ctx: InsightContext): Promise<Set<string>> {
  const before = new Set<string>()
  for (let i = 0; i < persons.length; i += PERSONS_PER_LOOKUP) {
    const chunk = persons.slice(i, i + PERSONS_PER_LOOKUP)
    const where = and([`person_id IN (${chunk.map(str).join(', ')})`, `timestamp < ${time(plan.periods[0].start)}`, plan.target, plan.global])
    const answer = await ctx.hogql(`SELECT person_id FROM events WHERE ${where} GROUP BY person_id LIMIT ${PERSONS_PER_LOOKUP}`)
    for (const row of answer.results) before.add(String(row[0]))
  }
  return before
}

async function countTable(plan: Plan, ctx: InsightContext): Promise<RetentionCounts> {
  const counts = emptyCounts(plan.periods.length, plan.lookahead)
  const from = plan.periods[0].start
  const to = plan.periods[plan.periods.length - 1].end
  const period = bucketStart(plan.interval, ctx.project.timezone, from, to, plan.weekStartDay)
  let after: string | null = null
  let read = 0
  for (;;) {
    const where = and(['person_id IS NOT NULL', after === null ? null : `person_id > ${str(after)}`, inRange(from, to), plan.global, `(${plan.target}) OR (${plan.returning})`])
    const answer = await ctx.hogql(
      `SELECT person_id, ${period} AS period, max(if(${plan.target}, 1, 0)) AS did_target, max(if(${plan.returning}, 1, 0)) AS did_return ` +
        `FROM events WHERE ${where} GROUP BY person_id, period ORDER BY person_id, period LIMIT ${plan.limits.pageRows}`,
    )
    let rows = answer.results
    if (answer.hasMore) {
      // the page may end inside a person: their rows are read again with the next page
      const last = String(rows[rows.length - 1]?.[0])
      rows = rows.filter((row) => String(row[0]) !== last)
      if (rows.length === 0) tooMany(plan.limits.maxRows)
    }
    read += rows.length
    if (read > plan.limits.maxRows) tooMany(plan.limits.maxRows)
    const persons = new Map<string, PersonRows>()
    for (const row of rows) {
      const id = String(row[0])
      const index = bucketOfRow(plan.periods, row[1], plan.interval, plan.weekStartDay)
      if (index < 0) continue
      let person = persons.get(id)
      if (!person) persons.set(id, (person = { targets: [], returns: new Set() }))
      if (Number(row[2]) === 1) person.targets.push(index)
      if (Number(row[3]) === 1) person.returns.add(index)
    }
    const candidates = [...persons].filter(([, p]) => p.targets.length > 0).map(([id]) => id)
    const before = plan.firstTime && candidates.length > 0 ? await targetedBefore(plan, candidates, ctx) : new Set<string>()
    for (const [id, person] of persons) countPerson(counts, { ...person, firstTargetBeforeRange: before.has(id) }, plan.firstTime)
    if (!answer.hasMore) return counts
    after = String(rows[rows.length - 1][0])
  }
}

/** The runner, with its page size and row cap (the defaults, or smaller ones where a test pages through few rows). */
export function retentionRunner(limits: RetentionLimits = { pageRows: RETENTION_PAGE_ROWS, maxRows: MAX_RETENTION_ROWS }) {
  return (query: RetentionQuery, ctx: InsightContext) => runRetention(query, ctx, limits)
}

async function runRetention(query: RetentionQuery, ctx: InsightContext, limits: RetentionLimits): Promise<KindAnswer> {
  const filter = query.retentionFilter
  const breakdown = query.breakdownFilter?.breakdown
  if (breakdown !== undefined && breakdown !== null && breakdown !== '') unsupported('Breakdowns are not supported by retention yet', 'query__breakdownFilter__breakdown')
  const period: RetentionPeriod = filter.period ?? 'Day'
  const interval = period.toLowerCase() as Interval
  const lookahead = filter.totalIntervals ?? DEFAULT_TOTAL_INTERVALS
  const { timezone, weekStartDay } = ctx.project
  const hasDateFrom = typeof query.dateRange?.date_from === 'string' && query.dateRange.date_from !== ''
  // without a date_from the range is counted back from date_to (whose own default is now)
  const dateRange = hasDateFrom ? query.dateRange : { ...query.dateRange, date_from: query.dateRange?.date_to ?? null }
  const resolved = await ctx.dateRange(dateRange, interval)
  const periods = retentionPeriods(resolved, { interval, totalIntervals: lookahead, hasDateFrom, timezone, weekStartDay })
  if (periods.length === 0) throw errors.validation('invalid_date_range', 'This date range holds no whole period', 'dateRange')
  const plan: Plan = {
    limits,
    periods,
    interval,
    weekStartDay,
    lookahead,
    firstTime: filter.retentionType === 'retention_first_time',
    target: await entityCondition(filter.targetEntity ?? DEFAULT_ENTITY, 'query__retentionFilter__targetEntity', ctx),
    returning: await entityCondition(filter.returningEntity ?? DEFAULT_ENTITY, 'query__retentionFilter__returningEntity', ctx),
    global: await ctx.properties(query.properties, 'query__properties'),
  }
  const counts = await countTable(plan, ctx)
  const from = periods[0].start
  const to = periods[periods.length - 1].end
  const dates = periods.map((p) => isoLocal(timezone, p.start))
  return {
    body: { results: retentionRows(counts, period, dates) },
    range: { from, to, date_from: isoLocal(timezone, from), date_to: isoLocal(timezone, to - 1, 999) },
  }
}
