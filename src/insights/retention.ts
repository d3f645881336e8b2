// RetentionQuery: of the persons who did the target event in a period (a cohort), how many did the returning event
// in each later period. The store answers one row per person and period (did they do either event in it), read in
// pages ordered by person; the table is counted person by person here (retention-table.ts). Rows read are capped.
import { errors } from '../http/errors'
import type { Bucket } from './buckets'
import type { Interval } from './date-range'
import { and, bucketOfRow, bucketStart, inRange, isEvent, str, time, unsupported } from './hogql'
import type { RetentionQuery } from './model'
import { retentionRef } from './entities'
import { countPerson, emptyCounts, retentionPeriods, retentionRows, type RetentionCounts, type RetentionPeriod } from './retention-table'
import type { InsightContext, KindAnswer } from './service'
import { isoLocal } from '../lib/timezone'
import { BREAKDOWN_NULL, BREAKDOWN_OTHER, DEFAULT_BREAKDOWN_LIMIT, keptValues } from './breakdown-values'
import { groupIndexOf, groupKeyOf } from './groups'
import { userProp } from './hogql'

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

/** The condition an entity's events meet (`id` null: every event; with `type: "actions"`, an action's id). */
async function entityCondition(entity: Entity, attr: string, ctx: InsightContext): Promise<string> {
  return and([(await ctx.entity(retentionRef(entity, attr), attr)).condition, await ctx.properties(entity.properties, `${attr}__properties`)])
}

export interface RetentionLimits {
  pageRows: number
  maxRows: number
  /** numbers the tables by breakdown value may hold (default MAX_RETENTION_CELLS; smaller where a test reaches it) */
  maxCells?: number
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
  /** who is counted: the person, or the group of aggregation_group_type_index (its key on the event) */
  actor: string
  /** the events that have one */
  actorPresent: string
  /**
   * event: the property on the cohort period's first target event; person: the person's property now; group: the
   * property now of the group on that first target event (its key read with the events, its property from Postgres)
   */
  breakdown: { kind: 'event' | 'person' | 'group'; key: string; limit: number; hideOther: boolean; groupIndex: number } | null
}

/** Numbers one answer by breakdown value may hold, and its tables while they are counted (values × periods × intervals). */
export const MAX_RETENTION_CELLS = 1_000_000

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
    const where = and([`${plan.actor} IN (${chunk.map(str).join(', ')})`, `timestamp < ${time(plan.periods[0].start)}`, plan.target, plan.global])
    const answer = await ctx.hogql(`SELECT ${plan.actor} AS actor FROM events WHERE ${where} GROUP BY actor LIMIT ${PERSONS_PER_LOOKUP}`)
    for (const row of answer.results) before.add(String(row[0]))
  }
  return before
}

/**
 * The breakdown value of each (actor, cohort period) of these actors: `valueAt(actor, period index)`. Person: the
 * person's property now. Event and group: the value on the actor's first target event of the period (ties: the
 * smaller value), read in one statement per PERSONS_PER_LOOKUP actors; a group's key then turned into its property.
 */
async function breakdownValues(plan: Plan, actors: string[], period: string, ctx: InsightContext): Promise<(actor: string, index: number) => string> {
  const b = plan.breakdown!
  const attr = 'query__breakdownFilter__breakdown'
  if (b.kind === 'person') {
    // a person id that is not a uuid (none is, on a store that maps every event) has no properties
    const valueOf = await ctx.personProperty(actors.filter((a) => /^[0-9a-f-]{36}$/i.test(a)), b.key, attr)
    return (actor) => valueOf.get(actor) ?? BREAKDOWN_NULL
  }
  const column = b.kind === 'event' ? `toString(${userProp(b.key, attr)})` : (await groupKeyOf(ctx, b.groupIndex, 'query__breakdownFilter__breakdown_group_type_index')).key
  const from = plan.periods[0].start
  const to = plan.periods[plan.periods.length - 1].end
  const first = new Map<string, { at: string; value: string | null }>()
  // an actor has a row per period and value: as many actors a statement as a page's rows hold with one value a period,
  // halved while a statement's rows overflow its page (several values a period); one actor's overflowing is refused
  const read = async (chunk: string[]): Promise<void> => {
    const where = and([`${plan.actor} IN (${chunk.map(str).join(', ')})`, inRange(from, to), plan.global, plan.target])
    const answer = await ctx.hogql(
      `SELECT ${plan.actor} AS actor, ${period} AS period, ${column} AS value, min(timestamp) AS first FROM events WHERE ${where} GROUP BY actor, period, value LIMIT ${plan.limits.pageRows}`,
    )
    if (answer.hasMore) {
      if (chunk.length === 1) tooMany(plan.limits.pageRows)
      const half = chunk.length >> 1
      await read(chunk.slice(0, half))
      return read(chunk.slice(half))
    }
    for (const row of answer.results) {
      const index = bucketOfRow(plan.periods, row[1], plan.interval, plan.weekStartDay)
      if (index < 0) continue
      const id = `${String(row[0])}\n${index}`
      const value = row[2] === null || row[2] === undefined || row[2] === '' ? null : String(row[2])
      const at = String(row[3])
      const seen = first.get(id)
      if (!seen || at < seen.at || (at === seen.at && (value ?? '') < (seen.value ?? ''))) first.set(id, { at, value })
    }
  }
  const perStatement = Math.max(1, Math.min(PERSONS_PER_LOOKUP, Math.floor(plan.limits.pageRows / plan.periods.length)))
  for (let i = 0; i < actors.length; i += perStatement) await read(actors.slice(i, i + perStatement))
  let groupValue: Map<string, string | null> | null = null
  if (b.kind === 'group') {
    const keys = [...new Set([...first.values()].map((f) => f.value).filter((v): v is string => v !== null))]
    groupValue = await ctx.groupProperty(b.groupIndex, keys, b.key, attr)
  }
  return (actor, index) => {
    const raw = first.get(`${actor}\n${index}`)?.value ?? null
    if (raw === null) return BREAKDOWN_NULL
    return (groupValue ? groupValue.get(raw) : raw) ?? BREAKDOWN_NULL
  }
}

/** Tables by breakdown value ('' without a breakdown). */
async function countTable(plan: Plan, ctx: InsightContext): Promise<Map<string, RetentionCounts>> {
  const tables = new Map<string, RetentionCounts>()
  const cellsPerTable = plan.periods.length * plan.lookahead
  const tableOf = (value: string): RetentionCounts => {
    let table = tables.get(value)
    if (!table) {
      const maxCells = plan.limits.maxCells ?? MAX_RETENTION_CELLS
      if ((tables.size + 1) * cellsPerTable > maxCells && plan.breakdown) {
        throw errors.validation('too_many_results', `This retention by breakdown value would count more than ${maxCells.toLocaleString('en-US')} numbers (values × periods × intervals): pick a larger period, a shorter range or a property with fewer values`, 'query__breakdownFilter__breakdown')
      }
      tables.set(value, (table = emptyCounts(plan.periods.length, plan.lookahead)))
    }
    return table
  }
  const from = plan.periods[0].start
  const to = plan.periods[plan.periods.length - 1].end
  const period = bucketStart(plan.interval, ctx.project.timezone, from, to, plan.weekStartDay)
  let after: string | null = null
  let read = 0
  for (;;) {
    const where = and([plan.actorPresent, after === null ? null : `${plan.actor} > ${str(after)}`, inRange(from, to), plan.global, `(${plan.target}) OR (${plan.returning})`])
    const answer = await ctx.hogql(
      `SELECT ${plan.actor} AS actor, ${period} AS period, max(if(${plan.target}, 1, 0)) AS did_target, max(if(${plan.returning}, 1, 0)) AS did_return ` +
        `FROM events WHERE ${where} GROUP BY actor, period ORDER BY ${plan.actor}, period LIMIT ${plan.limits.pageRows}`,
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
    if (!plan.breakdown) {
      for (const [id, person] of persons) countPerson(tableOf(''), { ...person, firstTargetBeforeRange: before.has(id) }, plan.firstTime)
    } else {
      const valueAt = candidates.length > 0 ? await breakdownValues(plan, candidates, period, ctx) : () => BREAKDOWN_NULL
      for (const [id, person] of persons) {
        // the person's cohorts (first time: the first one only), each counted in the table of its own value
        let cohorts = person.targets.filter((i) => i >= 0 && i < plan.periods.length)
        if (plan.firstTime) cohorts = before.has(id) || cohorts.length === 0 ? [] : [Math.min(...cohorts)]
        const byValue = new Map<string, number[]>()
        for (const i of cohorts) {
          const v = valueAt(id, i)
          const list = byValue.get(v)
          if (list) list.push(i)
          else byValue.set(v, [i])
        }
        for (const [v, targets] of byValue) countPerson(tableOf(v), { targets, returns: person.returns }, false)
      }
    }
    if (!answer.hasMore) return tables
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
  const breakdownType = query.breakdownFilter?.breakdown_type ?? 'event'
  const hasBreakdown = breakdown !== undefined && breakdown !== null && breakdown !== ''
  if (hasBreakdown && (breakdownType === 'cohort' || Array.isArray(breakdown))) unsupported('Retention cannot be broken down by cohort: break down by an event, person or group property', 'query__breakdownFilter__breakdown_type')
  const aggregation = query.aggregation_group_type_index ?? null
  const group = aggregation === null ? null : await groupKeyOf(ctx, aggregation, 'query__aggregation_group_type_index')
  if (hasBreakdown && group !== null && breakdownType === 'person') unsupported('A retention of groups cannot be broken down by a person property: break down by an event or group property', 'query__breakdownFilter__breakdown_type')
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
    actor: group?.key ?? 'person_id',
    actorPresent: group?.present ?? 'person_id IS NOT NULL',
    breakdown: !hasBreakdown
      ? null
      : {
          kind: breakdownType as 'event' | 'person' | 'group',
          key: String(breakdown),
          limit: query.breakdownFilter?.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT,
          hideOther: query.breakdownFilter?.breakdown_hide_other_aggregation === true,
          groupIndex: breakdownType === 'group' ? groupIndexOf(query.breakdownFilter?.breakdown_group_type_index, 'query__breakdownFilter__breakdown_group_type_index') : -1,
        },
  }
  const tables = await countTable(plan, ctx)
  const from = periods[0].start
  const to = periods[periods.length - 1].end
  const dates = periods.map((p) => isoLocal(timezone, p.start))
  let results: unknown[]
  if (!plan.breakdown) results = retentionRows(tables.get('') ?? emptyCounts(periods.length, lookahead), period, dates)
  else {
    // values ranked by their cohorts' sizes; past breakdown_limit, summed as "other" (unless hidden)
    const totals = new Map([...tables].map(([v, t]) => [v, t.reduce((n, row) => n + row[0], 0)]))
    const { kept, other } = keptValues(totals, plan.breakdown.limit, plan.breakdown.hideOther)
    const keptSet = new Set(kept)
    let rest: RetentionCounts | null = null
    if (other) {
      rest = emptyCounts(periods.length, lookahead)
      for (const [v, t] of tables) if (!keptSet.has(v)) t.forEach((row, i) => row.forEach((n, k) => (rest![i][k] += n)))
    }
    const shown: [string, RetentionCounts][] = [...kept.map((v) => [v, tables.get(v)!] as [string, RetentionCounts]), ...(rest ? [[BREAKDOWN_OTHER, rest] as [string, RetentionCounts]] : [])]
    results = shown.flatMap(([v, t]) => retentionRows(t, period, dates).map((row) => ({ ...row, breakdown_value: v })))
  }
  return {
    body: { results },
    range: { from, to, date_from: isoLocal(timezone, from), date_to: isoLocal(timezone, to - 1, 999) },
  }
}
