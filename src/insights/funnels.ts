// FunnelsQuery: how many persons went through the steps in order (or strictly in a row, or in any order) within the
// conversion window. One HogQL query reads the step and exclusion events of the range, person by person in time
// order, a page at a time (keyset on person, time, uuid); funnel-steps.ts counts each person as their events end.
// Views: steps (counts and conversion times per step), trends (conversion per bucket of the first step) and
// time_to_convert (a histogram). docs/insights.md "Funnels" says what is counted and the caps.
import { bucketIndexAt, buckets } from './buckets'
import { and, inRange, isEvent, prop, str, time, unsupported, userProp } from './hogql'
import { attemptsOf, bestAttempt, histogram, mean, median, secondsBetween, windowDeadline, type Attempt, type FunnelEvent, type FunnelRules, type WindowUnit } from './funnel-steps'
import type { EventsNode, FunnelsQuery } from './model'
import type { InsightContext, KindAnswer } from './service'
import { BREAKDOWN_NULL, DEFAULT_BREAKDOWN_LIMIT, keptValues } from './breakdown-values'
import { ApiError, errors } from '../http/errors'

export const BREAKDOWN_OTHER_FUNNEL = 'Other'
/** Rows one page reads (the query layer's LIMIT cap). */
const PAGE_ROWS = 50_000

export interface FunnelLimits {
  /** events one funnel may read; past it the question is refused (400 too_many_events) */
  maxEvents: number
  /** QUERY_TIMEOUT_MS: the whole funnel's pages within it (each statement has it too), checked before each next page */
  timeoutMs: number
  /** counts events read and refusals */
  onEvents?(outcome: 'read' | 'refused', count: number): void
}

/** The person's identity: the resolved person, or the distinct id of events whose id has no person yet. */
const ACTOR = 'coalesce(person_id, distinct_id)'

interface Plan {
  query: FunnelsQuery
  /** the query's own property filters */
  global: string | null
  rules: FunnelRules
  steps: string[]
  exclusions: string[]
  breakdown: { key: string; limit: number } | null
  from: number
  to: number
}

function stepName(series: EventsNode): string {
  return series.event === null || series.event === undefined ? 'All events' : series.event
}

/** The query's funnel rules, every step index checked (a 400 naming the member otherwise). */
async function planOf(query: FunnelsQuery, ctx: InsightContext): Promise<Plan> {
  const f = query.funnelsFilter ?? {}
  const stepCount = query.series.length
  const attribution = f.breakdownAttributionType ?? 'first_touch'
  if (attribution !== 'first_touch') unsupported(`breakdownAttributionType "${attribution}" is not supported by phog's funnels yet (first_touch is)`, 'query__funnelsFilter__breakdownAttributionType')
  const exclusions = await Promise.all(
    (f.exclusions ?? []).map(async (e, i) => {
      if (e.funnelFromStep >= e.funnelToStep || e.funnelToStep >= stepCount) {
        unsupported(`An exclusion needs funnelFromStep < funnelToStep ≤ ${stepCount - 1} (the last step's index)`, `query__funnelsFilter__exclusions__${i}`)
      }
      return { rule: { fromStep: e.funnelFromStep, toStep: e.funnelToStep }, condition: and([isEvent(e.event), await ctx.properties(e.properties, `query__funnelsFilter__exclusions__${i}__properties`)]) }
    }),
  )
  const from = f.funnelFromStep ?? 0
  const to = f.funnelToStep ?? stepCount - 1
  if (from >= to || to >= stepCount) unsupported(`funnelFromStep and funnelToStep need 0 ≤ funnelFromStep < funnelToStep ≤ ${stepCount - 1}`, 'query__funnelsFilter__funnelToStep')
  const breakdownKey = query.breakdownFilter?.breakdown
  if (breakdownKey !== undefined && breakdownKey !== null && (query.breakdownFilter?.breakdown_type ?? 'event') !== 'event') {
    unsupported('Breakdowns by person property are not supported by insights yet: break down by an event property', 'query__breakdownFilter__breakdown_type')
  }
  const steps: string[] = []
  for (const [i, s] of query.series.entries()) steps.push(and([isEvent(s.event), await ctx.properties(s.properties, `query__series__${i}__properties`)]))
  return {
    query,
    global: await ctx.properties(query.properties, 'query__properties'),
    rules: {
      order: f.funnelOrderType ?? 'ordered',
      stepCount,
      exclusions: exclusions.map((e) => e.rule),
      deadline: windowDeadline(f.funnelWindowInterval ?? 14, (f.funnelWindowIntervalUnit ?? 'day') as WindowUnit),
    },
    steps,
    exclusions: exclusions.map((e) => e.condition),
    breakdown: breakdownKey === undefined || breakdownKey === null || breakdownKey === '' ? null : { key: String(breakdownKey), limit: query.breakdownFilter?.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT },
    from,
    to,
  }
}

/**
 * Reads the events, person by person, and hands each person's attempts to `onPerson`. Strict funnels read every
 * event of the range (any other event breaks an attempt); the others only events of a step or an exclusion.
 */
async function readPersons(plan: Plan, range: { from: number; to: number }, ctx: InsightContext, limits: FunnelLimits, onPerson: (attempts: Attempt[]) => void): Promise<void> {
  // which steps and exclusions an event matches, as two bit masks (20 of each at most: within 32 bits)
  const mask = (conditions: string[]) => (conditions.length === 0 ? '0' : conditions.map((c, i) => `if(${c}, ${2 ** i}, 0)`).join(' + '))
  const breakdown = plan.breakdown ? `toString(${userProp(plan.breakdown.key, 'query__breakdownFilter__breakdown')})` : 'NULL'
  const relevant = plan.rules.order === 'strict' ? null : [...plan.steps, ...plan.exclusions].map((c) => `(${c})`).join(' OR ')
  const where = and([inRange(range.from, range.to), plan.global, relevant])
  let person: string | null = null
  let events: FunnelEvent[] = []
  const flush = () => {
    if (events.length > 0) onPerson(attemptsOf(events, plan.rules))
    events = []
  }
  let after: { actor: string; at: number; uuid: string } | null = null
  let read = 0
  const started = Date.now()
  for (;;) {
    if (after !== null && Date.now() - started > limits.timeoutMs) {
      throw new ApiError(504, 'server_error', 'query_timeout', `The funnel's events were not read within QUERY_TIMEOUT_MS (${limits.timeoutMs} ms): pick a shorter date range or narrower steps`)
    }
    const keyset = after === null ? null : `${ACTOR} > ${str(after.actor)} OR (${ACTOR} = ${str(after.actor)} AND (timestamp > ${time(after.at)} OR (timestamp = ${time(after.at)} AND uuid > ${str(after.uuid)})))`
    const page = await ctx.hogql(
      `SELECT ${ACTOR} AS actor, timestamp, uuid, ${breakdown} AS breakdown_value, ${mask(plan.steps)} AS steps, ${mask(plan.exclusions)} AS exclusions FROM events WHERE ${and([where, keyset])} ORDER BY actor, timestamp, uuid LIMIT ${PAGE_ROWS}`,
    )
    read += page.results.length
    if (read > limits.maxEvents) {
      limits.onEvents?.('refused', page.results.length)
      throw errors.validation('too_many_events', `This funnel reads more than ${limits.maxEvents} events (INSIGHTS_FUNNEL_MAX_EVENTS): pick a shorter date range or narrower steps`, 'query__dateRange')
    }
    limits.onEvents?.('read', page.results.length)
    for (const row of page.results) {
      const actor = String(row[0])
      if (actor !== person) {
        flush()
        person = actor
      }
      const at = parseUtc(String(row[1]))
      events.push({ at, breakdown: row[3] === null || row[3] === undefined ? null : String(row[3]), steps: Number(row[4]), exclusions: Number(row[5]) })
      after = { actor, at, uuid: String(row[2]) }
    }
    if (!page.hasMore || page.results.length === 0) break
  }
  flush()
}

/** A time of the query layer's answers (`2024-05-06T01:00:00.000Z`) in UTC ms, without Date.parse's cost per row. */
export function parseUtc(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3})\d*)?Z?$/.exec(text)
  if (!m) return Date.parse(text)
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6], m[7] ? +m[7].padEnd(3, '0') : 0)
}

/** Breakdown values in order of persons entering (most first), the ones past the limit folded into "Other". */
function rankedValues(entered: Map<string, number>, limit: number): { kept: string[]; folded: (value: string) => string } {
  const { kept, other } = keptValues(entered, limit, false)
  const keptSet = new Set(kept)
  return { kept: [...kept, ...(other ? [BREAKDOWN_OTHER_FUNNEL] : [])], folded: (v) => (keptSet.has(v) ? v : BREAKDOWN_OTHER_FUNNEL) }
}

const keyOf = (attempt: Attempt, plan: Plan) => (plan.breakdown ? (attempt.breakdown ?? BREAKDOWN_NULL) : '')

/** The steps view: per step, persons who reached it and their times from the step before. */
async function stepsView(plan: Plan, range: { from: number; to: number }, ctx: InsightContext, limits: FunnelLimits): Promise<unknown[]> {
  const { stepCount } = plan.rules
  // per breakdown value: per step, the seconds each person who reached it took from the step before (0 for step 0)
  const reached = new Map<string, number[][]>()
  await readPersons(plan, range, ctx, limits, (attempts) => {
    const best = bestAttempt(attempts)
    if (!best) return
    const key = keyOf(best, plan)
    let times = reached.get(key)
    if (!times) reached.set(key, (times = Array.from({ length: stepCount }, () => [])))
    for (let k = 0; k < best.at.length; k++) times[k].push(k === 0 ? 0 : (best.at[k] - best.at[k - 1]) / 1000)
  })
  const stepsOf = (times: number[][] | undefined, breakdownValue?: string) =>
    plan.query.series.map((series, order) => {
      const list = times?.[order] ?? []
      return {
        action_id: series.event ?? null,
        name: series.name ?? stepName(series),
        custom_name: series.custom_name ?? null,
        order,
        count: list.length,
        type: 'events',
        people: [],
        average_conversion_time: order === 0 ? null : mean(list),
        median_conversion_time: order === 0 ? null : median(list),
        ...(breakdownValue === undefined ? {} : { breakdown: breakdownValue, breakdown_value: breakdownValue }),
      }
    })
  if (!plan.breakdown) return stepsOf(reached.get(''))
  const { kept, folded } = rankedValues(new Map([...reached].map(([v, times]) => [v, times[0].length])), plan.breakdown.limit)
  const merged = new Map<string, number[][]>()
  for (const [value, times] of reached) {
    const into = merged.get(folded(value))
    if (!into) merged.set(folded(value), times)
    else times.forEach((list, k) => into[k].push(...list))
  }
  return kept.map((value) => stepsOf(merged.get(value), value))
}

/** The trends view: per bucket of the attempts' first step, the share of persons entering at funnelFromStep who reached funnelToStep. */
async function trendsView(plan: Plan, range: { from: number; to: number }, ctx: InsightContext, limits: FunnelLimits): Promise<unknown[]> {
  const interval = plan.query.interval ?? 'day'
  const list = buckets(range, interval, { timezone: ctx.project.timezone, weekStartDay: ctx.project.weekStartDay })
  // per breakdown value: per bucket, [persons at the from step, persons at the to step]
  const counts = new Map<string, [number, number][]>()
  await readPersons(plan, range, ctx, limits, (attempts) => {
    const perBucket = new Map<number, Attempt[]>()
    for (const a of attempts) {
      const i = bucketIndexAt(list, a.start)
      if (i < 0) continue
      const inBucket = perBucket.get(i)
      if (inBucket) inBucket.push(a)
      else perBucket.set(i, [a])
    }
    for (const [i, inBucket] of perBucket) {
      const best = bestAttempt(inBucket)!
      if (best.at.length <= plan.from) continue
      const key = keyOf(best, plan)
      let series = counts.get(key)
      if (!series) counts.set(key, (series = list.map(() => [0, 0])))
      series[i][0]++
      if (best.at.length > plan.to) series[i][1]++
    }
  })
  const itemOf = (series: [number, number][] | undefined, breakdownValue?: string) => {
    const data = list.map((_, i) => {
      const [entered, converted] = series?.[i] ?? [0, 0]
      return entered === 0 ? 0 : Math.round((converted / entered) * 10_000) / 100
    })
    return { count: data.length, data, days: list.map((b) => b.day), labels: list.map((b) => b.label), ...(breakdownValue === undefined ? {} : { breakdown_value: breakdownValue }) }
  }
  if (!plan.breakdown) return [itemOf(counts.get(''))]
  const entered = new Map([...counts].map(([v, s]) => [v, s.reduce((n, [e]) => n + e, 0)]))
  const { kept, folded } = rankedValues(entered, plan.breakdown.limit)
  const merged = new Map<string, [number, number][]>()
  for (const [value, series] of counts) {
    const into = merged.get(folded(value))
    if (!into) merged.set(folded(value), series)
    else series.forEach(([e, c], i) => ((into[i][0] += e), (into[i][1] += c)))
  }
  return kept.map((value) => itemOf(merged.get(value), value))
}

/** The time_to_convert view: seconds from funnelFromStep to funnelToStep of each person who got there. */
async function timeToConvertView(plan: Plan, range: { from: number; to: number }, ctx: InsightContext, limits: FunnelLimits): Promise<Record<string, unknown>> {
  const seconds: number[] = []
  await readPersons(plan, range, ctx, limits, (attempts) => {
    const best = bestAttempt(attempts.filter((a) => a.at.length > plan.to))
    const s = best === null ? null : secondsBetween(best, plan.from, plan.to)
    if (s !== null) seconds.push(s)
  })
  return { bins: histogram(seconds, plan.query.funnelsFilter?.binCount), average_conversion_time: mean(seconds) }
}

export function funnelsRunner(limits: FunnelLimits) {
  return async function runFunnels(query: FunnelsQuery, ctx: InsightContext): Promise<KindAnswer> {
    const plan = await planOf(query, ctx)
    const range = await ctx.dateRange(query.dateRange, query.interval ?? 'day')
    switch (query.funnelsFilter?.funnelVizType ?? 'steps') {
      case 'trends':
        return { body: { results: await trendsView(plan, range, ctx, limits) }, range }
      case 'time_to_convert':
        return { body: { results: await timeToConvertView(plan, range, ctx, limits) }, range }
      default:
        return { body: { results: await stepsView(plan, range, ctx, limits) }, range }
    }
  }
}
