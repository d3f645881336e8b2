// TrendsQuery: each series counted per bucket of the range (every bucket present, zeros included), in the project's
// timezone, optionally broken down by an event property and compared with the previous period; formulas over the
// series; "total value" displays answer one number per series instead. docs/insights.md says what each math means.
import { BREAKDOWN_NULL, BREAKDOWN_OTHER, DEFAULT_BREAKDOWN_LIMIT } from './breakdown-values'
import { buckets, type Bucket } from './buckets'
import { mathParts, personBreakdown, type ActorOf } from './person-breakdown'
import { groupIndexOf, groupKeyOf } from './groups'
import { cohortConditions, type CohortCondition } from './cohort-breakdown'
import { comparisonRange, type Interval, type ResolvedDateRange } from './date-range'
import { evaluateFormula, parseFormula } from './formula'
import { ACTIVE_WINDOW_DAYS, activePersons, PERCENTILES, percentiles } from './trends-rows'
import { errors } from '../http/errors'
import { and, bucketOfRow, bucketStart, inRange, isEvent, prop, str, unsupported, userProp } from './hogql'
// a series is an EventsNode or an ActionsNode: the runner reads what both carry, and asks ctx.entity for its events
import type { SeriesNode as EventsNode, TrendsQuery } from './model'
import type { InsightContext, KindAnswer } from './service'

/** Rows one series' query may answer (buckets × breakdown values); past it the question is refused, not cut. */
const MAX_ROWS = 50_000
/**
 * Numbers one answer may carry: its result items × their buckets, formulas' items counted too (each number comes with
 * a label and a day: 1,000,000 of them are some 40 MB of JSON). Counted before the statements that would make them
 * run (a breakdown's values are read first, no more of them than there is room for); for a breakdown by a person
 * property, whose values come with its one statement, before the arrays are made.
 */
export const MAX_RESULT_CELLS = 1_000_000
const TOTAL_VALUE_DISPLAYS = new Set(['BoldNumber', 'ActionsPie', 'ActionsBarValue', 'ActionsTable', 'WorldMap'])

export interface TrendsResult {
  data: number[]
  labels: string[]
  days: string[]
  count: number
  label: string
  breakdown_value?: string
  aggregated_value?: number
  action: Record<string, unknown> | null
  compare?: boolean
  compare_label?: 'current' | 'previous'
  filter?: Record<string, unknown>
}

/** Weekly (monthly) active persons per week (month) or longer are the persons of the bucket: dau. */
function effectiveMath(math: string, interval: Interval): string {
  if (math === 'weekly_active' && (interval === 'week' || interval === 'month')) return 'dau'
  if (math === 'monthly_active' && interval === 'month') return 'dau'
  return math
}

/** A series' math_property read as a number (HogQL). */
function propertyNumber(series: EventsNode, attr: string): string {
  if (!series.math_property) unsupported(`math "${series.math}" needs math_property`, `${attr}__math_property`)
  return `toFloat(${userProp(series.math_property, `${attr}__math_property`)})`
}

/** The aggregate of a series' math over its events (HogQL); `groupKey`: the key of its group type (unique_group). */
function aggregate(series: EventsNode, attr: string, groupKey: string | null = null): string {
  const math = series.math ?? 'total'
  const property = () => propertyNumber(series, attr)
  switch (math) {
    case 'total':
      return 'count()'
    case 'unique_group':
      return `count(DISTINCT ${groupKey})`
    case 'dau':
      return 'count(DISTINCT person_id)'
    case 'unique_session':
      return `count(DISTINCT ${prop('$session_id')})`
    case 'sum':
      return `coalesce(sum(${property()}), 0)`
    case 'avg':
    case 'min':
    case 'max':
      return `coalesce(${math}(${property()}), 0)`
    default:
      return unsupported(`math "${math}" is not supported`, `${attr}__math`)
  }
}

function seriesName(series: EventsNode): string {
  return series.event === null || series.event === undefined ? 'All events' : series.event
}

function actionOf(series: EventsNode, order: number): Record<string, unknown> {
  return {
    id: series.event ?? null,
    type: 'events',
    order,
    name: series.name ?? seriesName(series),
    custom_name: series.custom_name ?? null,
    math: series.math ?? 'total',
    math_property: series.math_property ?? null,
    math_hogql: null,
    properties: series.properties ?? [],
  }
}

interface Plan {
  query: TrendsQuery
  interval: Interval
  weekStartDay: number
  totalValue: boolean
  global: string | null
  /** person: by a person's property now; group: by the property now of the event's group of type `group` */
  breakdown: { key: string; limit: number; person: boolean; group: number | null; hideOther: boolean } | null
  /** a cohort breakdown: each series once per cohort (or 'all': every person) */
  cohorts: CohortCondition[] | null
  /** numbers the answer holds so far (MAX_RESULT_CELLS) */
  cells: { used: number }
}

/** Counts `items` result items of `bucketCount` buckets into the answer; past MAX_RESULT_CELLS, refused by `attr`. */
function spendCells(plan: Plan, items: number, bucketCount: number, attr: string): void {
  plan.cells.used += items * Math.max(1, bucketCount)
  if (plan.cells.used <= MAX_RESULT_CELLS) return
  throw errors.validation(
    'too_many_results',
    `This answer would hold more than ${MAX_RESULT_CELLS.toLocaleString('en-US')} numbers (result items × buckets, every series, period and formula): pick a larger interval, a shorter range, a smaller breakdown_limit, or fewer series or formulas`,
    attr,
  )
}

type Base = Pick<TrendsResult, 'labels' | 'days' | 'action' | 'label'>

/** Results per breakdown value from rows (bucket start | null, value, number); their numbers already counted. */
function breakdownResults(plan: Plan, list: readonly Bucket[], base: Base, values: string[], rows: unknown[][]): TrendsResult[] {
  const labelOf = (v: string) => (plan.query.series.length > 1 ? `${base.label} - ${v}` : v)
  const byValue = new Map<string, unknown[][]>()
  for (const row of rows) {
    const v = String(row[1])
    const list = byValue.get(v)
    if (list) list.push([row[0], row[2]])
    else byValue.set(v, [[row[0], row[2]]])
  }
  return values.map((v) => {
    if (plan.totalValue) {
      const total = Number(byValue.get(v)?.[0]?.[1] ?? 0)
      return { ...base, data: [], count: total, aggregated_value: total, breakdown_value: v, label: labelOf(v) }
    }
    const data = fill(list, byValue.get(v) ?? [], plan)
    return { ...base, data, count: sum(data), breakdown_value: v, label: labelOf(v) }
  })
}

/**
 * One series over one range, prepared: its numbers counted into the answer's budget (after its breakdown values
 * were read, for a breakdown by an event property), and the statement that makes its result items still to run.
 */
interface PreparedSeries {
  /** the breakdown values of its items ('' for its one item without a breakdown); null until it runs (person breakdowns) */
  keys: string[] | null
  run(): Promise<TrendsResult[]>
}

/** One period's series, prepared; `formulasCounted`: its formulas' numbers are in the budget already. */
interface PreparedPeriod {
  series: PreparedSeries[]
  formulasCounted: boolean
}

async function prepareSeries(plan: Plan, series: EventsNode, order: number, range: ResolvedDateRange, list: readonly Bucket[], ctx: InsightContext): Promise<PreparedSeries> {
  const attr = `query__series__${order}`
  if (plan.cohorts) return prepareCohorts(plan, series, order, range, list, ctx)
  const { project } = ctx
  const seriesFilter = await ctx.properties(series.properties, `${attr}__properties`)
  const entity = await ctx.entity(series, attr)
  // unique_group: the distinct keys of a group type among the events that have one
  const groupIndex = series.math === 'unique_group' ? groupIndexOf(series.math_group_type_index, `${attr}__math_group_type_index`) : null
  const mathGroup = groupIndex === null ? null : await groupKeyOf(ctx, groupIndex, `${attr}__math_group_type_index`)
  const whereIn = (r: ResolvedDateRange) => and([entity.condition, inRange(r.from, r.to), plan.global, seriesFilter, mathGroup?.present])
  const where = whereIn(range)
  const bucket = bucketStart(plan.interval, project.timezone, range.from, range.to, project.weekStartDay)
  if (!plan.breakdown) spendCells(plan, 1, list.length, attr)
  const base = { labels: list.map((b) => b.label), days: list.map((b) => b.day), action: { ...actionOf(series, order), id: entity.id, type: entity.type, name: series.name ?? entity.name }, label: series.custom_name ?? entity.name }

  // maths counted from rows: active persons over trailing windows, percentiles
  const math = effectiveMath(series.math ?? 'total', plan.interval)
  const windowDays = ACTIVE_WINDOW_DAYS[math]
  const p = PERCENTILES[math]
  if (windowDays !== undefined || p !== undefined) {
    if (plan.breakdown) unsupported(`math "${math}" cannot be broken down yet`, `${attr}__math`)
    // a missing math_property is refused now, before any series runs
    const column = p !== undefined ? propertyNumber(series, attr) : ''
    return {
      keys: [''],
      run: async () => {
        const data =
          windowDays !== undefined
            ? await activePersons(ctx, whereIn, range, list, windowDays, `${attr}__math`)
            : await percentiles(ctx, where, range, list, plan.interval, column, p!, `${attr}__math`)
        if (plan.totalValue) return [{ ...base, data: [], count: data[0], aggregated_value: data[0] }]
        return [{ ...base, data, count: sum(data) }]
      },
    }
  }
  if (plan.breakdown?.person || (plan.breakdown && plan.breakdown.group !== null)) {
    const { key, limit, hideOther, group } = plan.breakdown
    let by: ActorOf | undefined
    let partsMath = math
    if (group !== null) {
      // per group of the event: counts, sums and extremes combine over groups; persons and sessions may span groups
      if (math === 'unique_group' && groupIndex !== group) unsupported('unique_group can be broken down by a property of its own group type only', `${attr}__math_group_type_index`)
      if (math === 'dau' || math === 'unique_session') unsupported(`math "${math}" cannot be broken down by a group property yet`, `${attr}__math`)
      // the groups themselves, one row each
      if (math === 'unique_group') partsMath = 'dau'
      const column = (await groupKeyOf(ctx, group, 'query__breakdownFilter__breakdown_group_type_index')).key
      by = { column, valuesOf: (ids) => ctx.groupProperty(group, ids, key, 'query__breakdownFilter__breakdown') }
    } else if (math === 'unique_group') unsupported('unique_group cannot be broken down by a person property yet', `${attr}__math`)
    const parts = mathParts(partsMath, () => propertyNumber(series, attr), prop('$session_id'), `${attr}__math`)
    // the values are known only from the persons of its one statement: counted once it has run, before the arrays
    return {
      keys: null,
      run: async () => {
        const { values, rows } = await personBreakdown(ctx, { where, bucket: plan.totalValue ? null : bucket, parts, key, limit, hideOther, attr: 'query__breakdownFilter__breakdown', by })
        spendCells(plan, values.length, list.length, 'query__breakdownFilter__breakdown_limit')
        return breakdownResults(plan, list, base, values, rows)
      },
    }
  }
  const value = aggregate({ ...series, math }, attr, mathGroup?.key ?? null)

  if (!plan.breakdown) {
    return {
      keys: [''],
      run: async () => {
        if (plan.totalValue) {
          const answer = await ctx.hogql(`SELECT ${value} AS value FROM events WHERE ${where}`)
          const total = Number(answer.results[0]?.[0] ?? 0)
          return [{ ...base, data: [], count: total, aggregated_value: total }]
        }
        const answer = await ctx.hogql(`SELECT ${bucket} AS bucket, ${value} AS value FROM events WHERE ${where} GROUP BY bucket LIMIT ${MAX_ROWS}`)
        const data = fill(list, answer.results, plan)
        return [{ ...base, data, count: sum(data) }]
      },
    }
  }

  // breakdown: the values with the largest totals by name, the rest as "other", a missing one as "null". The values
  // are read first (one row each), and no more of them than the answer's budget has room for: one row past that
  // says the answer would be too large, and it is refused before the statement per bucket and value runs.
  const { limit, hideOther } = plan.breakdown
  const key = `coalesce(toString(${userProp(plan.breakdown.key, 'query__breakdownFilter__breakdown')}), ${str(BREAKDOWN_NULL)})`
  const room = Math.floor((MAX_RESULT_CELLS - plan.cells.used) / Math.max(1, list.length))
  const asked = Math.min(limit, room)
  const top = await ctx.hogql(
    `SELECT ${key} AS breakdown_value, ${value} AS value FROM events WHERE ${where} GROUP BY breakdown_value ORDER BY value DESC, breakdown_value ASC LIMIT ${asked + 1}`,
  )
  // more values than there is room for (fewer than the limit): refused with the count read so far
  if (asked < limit && top.results.length > asked) spendCells(plan, top.results.length, list.length, 'query__breakdownFilter__breakdown_limit')
  const kept = top.results.slice(0, limit).map((row) => String(row[0]))
  const hasOther = top.results.length > limit && !hideOther
  if (kept.length === 0) return { keys: [], run: async () => [] }
  const values = [...kept, ...(hasOther ? [BREAKDOWN_OTHER] : [])]
  spendCells(plan, values.length, list.length, 'query__breakdownFilter__breakdown_limit')
  const grouped = `CASE WHEN ${key} IN (${kept.map(str).join(', ')}) THEN ${key} ELSE ${str(BREAKDOWN_OTHER)} END`
  const restricted = hasOther ? where : and([where, `${key} IN (${kept.map(str).join(', ')})`])
  return {
    keys: values,
    run: async () => {
      const answer = plan.totalValue
        ? await ctx.hogql(`SELECT NULL AS bucket, ${grouped} AS breakdown_value, ${value} AS value FROM events WHERE ${restricted} GROUP BY breakdown_value LIMIT ${MAX_ROWS}`)
        : await ctx.hogql(`SELECT ${bucket} AS bucket, ${grouped} AS breakdown_value, ${value} AS value FROM events WHERE ${restricted} GROUP BY bucket, breakdown_value LIMIT ${MAX_ROWS}`)
      if (answer.hasMore) unsupported(`More than ${MAX_ROWS} rows: pick a larger interval, a shorter range or a smaller breakdown_limit`, 'query__breakdownFilter')
      return breakdownResults(plan, list, base, values, answer.results)
    },
  }
}

/**
 * A cohort breakdown: the series over each cohort's persons (resolved as cohort filters are, bounded there), one item
 * per cohort with its id as the value; a person in two cohorts counts in both.
 */
async function prepareCohorts(plan: Plan, series: EventsNode, order: number, range: ResolvedDateRange, list: readonly Bucket[], ctx: InsightContext): Promise<PreparedSeries> {
  const cohorts = plan.cohorts!
  const prepared: PreparedSeries[] = []
  for (const { members } of cohorts) prepared.push(await prepareSeries({ ...plan, cohorts: null, global: and([plan.global, members]) }, series, order, range, list, ctx))
  return {
    keys: cohorts.map((c) => String(c.id)),
    run: async () => {
      const out: TrendsResult[] = []
      for (const [i, one] of prepared.entries()) {
        const cohort = cohorts[i].id
        for (const item of await one.run()) {
          out.push({ ...item, breakdown_value: cohort as unknown as string, label: plan.query.series.length > 1 ? `${item.label} - ${cohort}` : String(cohort) })
        }
      }
      return out
    },
  }
}

/** Rows of (bucket start, value) spread over every bucket of the range. */
function fill(list: readonly Bucket[], rows: unknown[][], plan: Plan): number[] {
  const data = new Array<number>(list.length).fill(0)
  for (const row of rows) {
    const i = bucketOfRow(list, row[0], plan.interval, plan.weekStartDay)
    if (i >= 0) data[i] += Number(row[1] ?? 0)
  }
  return data
}

function sum(data: number[]): number {
  return data.reduce((a, b) => a + b, 0)
}

/** The formulas a query asks for (PostHog has three ways of writing them). */
function formulasOf(query: TrendsQuery): { formula: string; custom_name?: unknown }[] {
  const f = query.trendsFilter
  if (!f) return []
  if (f.formulaNodes && f.formulaNodes.length > 0) return f.formulaNodes
  if (f.formulas && f.formulas.length > 0) return f.formulas.map((formula) => ({ formula }))
  return f.formula ? [{ formula: f.formula }] : []
}

/**
 * Formula results from the series' results of one period: per breakdown value when broken down. `counted`: their
 * numbers are in the budget already (counted from the prepared series' values).
 */
function applyFormulas(plan: Plan, perSeries: TrendsResult[][], counted: boolean): TrendsResult[] {
  const { query } = plan
  const out: TrendsResult[] = []
  formulasOf(query).forEach(({ formula, custom_name }, index) => {
    const ast = parseFormula(formula, perSeries.length, `query__trendsFilter__formula`)
    const keys = [...new Set(perSeries.flatMap((items) => items.map((r) => r.breakdown_value ?? '')))]
    if (!counted) spendCells(plan, keys.length, perSeries.flat()[0]?.data.length ?? 0, 'query__trendsFilter__formula')
    for (const key of keys) {
      const items = perSeries.map((results) => results.find((r) => (r.breakdown_value ?? '') === key))
      const template = items.find((r) => r !== undefined)!
      const length = template.data.length
      const data = Array.from({ length }, (_, i) => evaluateFormula(ast, items.map((r) => r?.data[i] ?? 0)))
      const label = typeof custom_name === 'string' && custom_name !== '' ? custom_name : formula
      const aggregated = template.aggregated_value !== undefined ? evaluateFormula(ast, items.map((r) => r?.aggregated_value ?? 0)) : undefined
      out.push({
        data,
        labels: template.labels,
        days: template.days,
        count: aggregated ?? sum(data),
        label: key === '' ? label : `${label} - ${key}`,
        action: null,
        ...(key === '' ? {} : { breakdown_value: key }),
        ...(aggregated === undefined ? {} : { aggregated_value: aggregated }),
        filter: { formula, order: index },
      })
    }
  })
  return out
}

/**
 * A period's series prepared, and its formulas' numbers counted when every series' values are known (each formula
 * has an item per value of any series: the keys of applyFormulas).
 */
async function preparePeriod(plan: Plan, range: ResolvedDateRange, ctx: InsightContext): Promise<PreparedPeriod> {
  const { project } = ctx
  const list = plan.totalValue ? [] : buckets(range, plan.interval, { timezone: project.timezone, weekStartDay: project.weekStartDay })
  const series: PreparedSeries[] = []
  // one at a time: each query holds a slot of the project's fair share
  for (const [order, node] of plan.query.series.entries()) series.push(await prepareSeries(plan, node, order, range, list, ctx))
  const known = series.every((s) => s.keys !== null)
  const formulas = formulasOf(plan.query).length
  if (known && formulas > 0) spendCells(plan, formulas * new Set(series.flatMap((s) => s.keys!)).size, list.length, 'query__trendsFilter__formula')
  return { series, formulasCounted: known }
}

async function periodResults(plan: Plan, period: PreparedPeriod): Promise<TrendsResult[]> {
  const perSeries: TrendsResult[][] = []
  for (const series of period.series) perSeries.push(await series.run())
  return formulasOf(plan.query).length > 0 ? applyFormulas(plan, perSeries, period.formulasCounted) : perSeries.flat()
}

export async function runTrends(query: TrendsQuery, ctx: InsightContext): Promise<KindAnswer> {
  const interval = query.interval ?? 'day'
  const breakdownKey = query.breakdownFilter?.breakdown
  const breakdownType = query.breakdownFilter?.breakdown_type ?? 'event'
  const hasBreakdown = breakdownKey !== undefined && breakdownKey !== null && breakdownKey !== ''
  if (hasBreakdown && (breakdownType === 'cohort') !== Array.isArray(breakdownKey)) {
    unsupported('A cohort breakdown names a list of cohort ids (or "all"), and only a cohort breakdown does', 'query__breakdownFilter__breakdown')
  }
  const plan: Plan = {
    query,
    interval,
    weekStartDay: ctx.project.weekStartDay,
    totalValue: TOTAL_VALUE_DISPLAYS.has(query.trendsFilter?.display ?? ''),
    global: await ctx.properties(query.properties, 'query__properties'),
    cells: { used: 0 },
    // each cohort's persons resolved once for the query, whatever its series and periods
    cohorts: hasBreakdown && breakdownType === 'cohort' ? await cohortConditions(breakdownKey as (number | 'all')[], ctx) : null,
    breakdown:
      !hasBreakdown || breakdownType === 'cohort'
        ? null
        : {
            key: String(breakdownKey),
            limit: query.breakdownFilter?.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT,
            person: breakdownType === 'person',
            group: breakdownType === 'group' ? groupIndexOf(query.breakdownFilter?.breakdown_group_type_index, 'query__breakdownFilter__breakdown_group_type_index') : null,
            hideOther: query.breakdownFilter?.breakdown_hide_other_aggregation === true,
          },
  }
  // a formula is read before anything runs: a mistake in it costs no query
  for (const { formula } of formulasOf(query)) parseFormula(formula, query.series.length, 'query__trendsFilter__formula')
  const range = await ctx.dateRange(query.dateRange, interval)
  // both periods prepared (their numbers counted, breakdown values read) before either runs its statements per
  // bucket: an answer too large is refused before the work that would have made it
  const compare = Boolean(query.compareFilter?.compare)
  const preparedCurrent = await preparePeriod(plan, range, ctx)
  const previousRange = compare ? comparisonRange(range, ctx.project.timezone, query.compareFilter?.compare_to) : null
  const preparedPrevious = previousRange ? await preparePeriod(plan, previousRange, ctx) : null
  const current = await periodResults(plan, preparedCurrent)
  if (!preparedPrevious) return { body: { results: current }, range }
  const previous = await periodResults(plan, preparedPrevious)
  return {
    body: {
      results: [
        ...current.map((r) => ({ ...r, compare: true, compare_label: 'current' as const })),
        // the previous period is shown on the current one's buckets: its own dates, the current labels' positions
        ...previous.map((r) => ({ ...r, compare: true, compare_label: 'previous' as const })),
      ],
    },
    range,
  }
}
