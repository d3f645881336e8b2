// FunnelsQuery: how many persons went through the steps in order (or strictly in a row, or in any order) within the
// conversion window. One HogQL query reads the step and exclusion events of the range, person by person in time
// order, a page at a time (keyset on person, time, uuid); funnel-steps.ts counts each person as their events end.
// Views: steps (counts and conversion times per step), trends (conversion per bucket of the first step) and
// time_to_convert (a histogram). docs/insights.md "Funnels" says what is counted and the caps.
import { bucketIndexAt, buckets } from './buckets'
import { and, inRange, isEvent, prop, str, time, unsupported, userProp } from './hogql'
import { attemptsOf, bestAttempt, histogram, mean, median, secondsBetween, windowDeadline, type Attempt, type FunnelEvent, type FunnelRules, type WindowUnit } from './funnel-steps'
// a step is an EventsNode or an ActionsNode: its events come from ctx.entity
import type { SeriesNode as EventsNode, FunnelsQuery } from './model'
import type { InsightContext, KindAnswer } from './service'
import { BREAKDOWN_NULL, DEFAULT_BREAKDOWN_LIMIT, keptValues } from './breakdown-values'
import { groupIndexOf, groupKeyOf } from './groups'
import { cohortConditions } from './cohort-breakdown'
import { MAX_BREAKDOWN_PERSONS } from './person-sets'
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

/** Series one funnel trend by a person or group property keeps before their values are known (persons × buckets). */
const MAX_PENDING_CELLS = 2_000_000

/** The person's identity: the resolved person, or the distinct id of events whose id has no person yet. */
const ACTOR = 'coalesce(person_id, distinct_id)'

interface Plan {
  query: FunnelsQuery
  /** the query's own property filters */
  global: string | null
  rules: FunnelRules
  steps: string[]
  exclusions: string[]
  /**
   * event: the property on the attempt's first event; person: the person's property now (looked up once the events
   * are read); group: the property now of the group on the attempt's first event (its key read with the events)
   */
  breakdown: { kind: 'event' | 'person' | 'group'; key: string; limit: number; groupIndex: number } | null
  /** a cohort breakdown: one funnel per cohort (or 'all': every person) */
  cohorts: (number | 'all')[] | null
  /** who goes through the funnel: the person, or the group of aggregation_group_type_index */
  actor: string
  /** the events that have an actor (a group funnel reads only events of a group) */
  actorPresent: string | null
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
  const breakdownType = query.breakdownFilter?.breakdown_type ?? 'event'
  const hasBreakdown = breakdownKey !== undefined && breakdownKey !== null && breakdownKey !== ''
  const aggregation = query.aggregation_group_type_index ?? null
  const group = aggregation === null ? null : await groupKeyOf(ctx, aggregation, 'query__aggregation_group_type_index')
  if (hasBreakdown && (breakdownType === 'cohort') !== Array.isArray(breakdownKey)) {
    unsupported('A cohort breakdown names a list of cohort ids (or "all"), and only a cohort breakdown does', 'query__breakdownFilter__breakdown')
  }
  if (hasBreakdown && group !== null && (breakdownType === 'person' || breakdownType === 'cohort')) {
    unsupported(`A funnel of groups cannot be broken down by a ${breakdownType === 'person' ? 'person property' : 'cohort'}: break down by an event or group property`, 'query__breakdownFilter__breakdown_type')
  }
  const breakdownGroup = hasBreakdown && breakdownType === 'group' ? groupIndexOf(query.breakdownFilter?.breakdown_group_type_index, 'query__breakdownFilter__breakdown_group_type_index') : -1
  const steps: string[] = []
  for (const [i, s] of query.series.entries()) steps.push(and([(await ctx.entity(s, `query__series__${i}`)).condition, await ctx.properties(s.properties, `query__series__${i}__properties`)]))
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
    breakdown:
      !hasBreakdown || breakdownType === 'cohort'
        ? null
        : { kind: breakdownType, key: String(breakdownKey), limit: query.breakdownFilter?.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT, groupIndex: breakdownGroup },
    cohorts: hasBreakdown && breakdownType === 'cohort' ? (breakdownKey as (number | 'all')[]) : null,
    actor: group?.key ?? ACTOR,
    actorPresent: group?.present ?? null,
    from,
    to,
  }
}

/**
 * Reads the events, person by person, and hands each person's attempts to `onPerson`. Strict funnels read every
 * event of the range (any other event breaks an attempt); the others only events of a step or an exclusion.
 */
async function readPersons(plan: Plan, range: { from: number; to: number }, ctx: InsightContext, limits: FunnelLimits, onPerson: (attempts: Attempt[], actor: string) => void): Promise<void> {
  // which steps and exclusions an event matches, as two bit masks (20 of each at most: within 32 bits)
  const mask = (conditions: string[]) => (conditions.length === 0 ? '0' : conditions.map((c, i) => `if(${c}, ${2 ** i}, 0)`).join(' + '))
  const breakdown = await breakdownColumn(plan, ctx)
  const relevant = plan.rules.order === 'strict' ? null : [...plan.steps, ...plan.exclusions].map((c) => `(${c})`).join(' OR ')
  const where = and([inRange(range.from, range.to), plan.global, plan.actorPresent, relevant])
  const actorColumn = plan.actor
  let person: string | null = null
  let events: FunnelEvent[] = []
  const flush = () => {
    if (events.length > 0) onPerson(attemptsOf(events, plan.rules), person!)
    events = []
  }
  let after: { actor: string; at: number; uuid: string } | null = null
  let read = 0
  const started = Date.now()
  for (;;) {
    if (after !== null && Date.now() - started > limits.timeoutMs) {
      throw new ApiError(504, 'server_error', 'query_timeout', `The funnel's events were not read within QUERY_TIMEOUT_MS (${limits.timeoutMs} ms): pick a shorter date range or narrower steps`)
    }
    const keyset = after === null ? null : `${actorColumn} > ${str(after.actor)} OR (${actorColumn} = ${str(after.actor)} AND (timestamp > ${time(after.at)} OR (timestamp = ${time(after.at)} AND uuid > ${str(after.uuid)})))`
    const page = await ctx.hogql(
      `SELECT ${actorColumn} AS actor, timestamp, uuid, ${breakdown} AS breakdown_value, ${mask(plan.steps)} AS steps, ${mask(plan.exclusions)} AS exclusions FROM events WHERE ${and([where, keyset])} ORDER BY actor, timestamp, uuid LIMIT ${PAGE_ROWS}`,
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

/** The HogQL of the value read with each event: an event property, a group's key, or none. */
async function breakdownColumn(plan: Plan, ctx: InsightContext): Promise<string> {
  const b = plan.breakdown
  if (b?.kind === 'event') return `toString(${userProp(b.key, 'query__breakdownFilter__breakdown')})`
  if (b?.kind === 'group') return (await groupKeyOf(ctx, b.groupIndex, 'query__breakdownFilter__breakdown_group_type_index')).key
  return 'NULL'
}

/** A group key or person id that stands for "no value" until the values are looked up (neither can be empty). */
const NO_ACTOR = ''

/**
 * The key an attempt is counted under while the events are read: an event property's value, or (person and group
 * breakdowns) the person or the group whose property is looked up afterwards, by `relabel`.
 */
function keyOf(attempt: Attempt, plan: Plan, actor: string): string {
  if (!plan.breakdown) return ''
  if (plan.breakdown.kind === 'person') return actor
  if (plan.breakdown.kind === 'group') return attempt.breakdown ?? NO_ACTOR
  return attempt.breakdown ?? BREAKDOWN_NULL
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/**
 * Person and group breakdowns: the counts kept per person (group) turned into counts per value of its property as it
 * is now, at most MAX_BREAKDOWN_PERSONS of them looked up (past it, refused by name). Other breakdowns: as they are.
 */
async function relabel<T>(plan: Plan, byKey: Map<string, T>, ctx: InsightContext, merge: (into: T, from: T) => void): Promise<Map<string, T>> {
  const b = plan.breakdown
  if (!b || b.kind === 'event') return byKey
  const attr = 'query__breakdownFilter__breakdown'
  const keys = [...byKey.keys()].filter((k) => k !== NO_ACTOR)
  if (keys.length > MAX_BREAKDOWN_PERSONS) unsupported(`A breakdown by a ${b.kind} property reads at most ${MAX_BREAKDOWN_PERSONS} ${b.kind}s: pick a shorter range or narrower steps`, attr)
  // a person id that is not a uuid (a distinct id with no person yet) has no properties
  const valueOf = b.kind === 'person' ? await ctx.personProperty(keys.filter((k) => UUID.test(k)), b.key, attr) : await ctx.groupProperty(b.groupIndex, keys, b.key, attr)
  const out = new Map<string, T>()
  for (const [k, counted] of byKey) {
    const value = (k === NO_ACTOR ? null : valueOf.get(k)) ?? BREAKDOWN_NULL
    const into = out.get(value)
    if (into === undefined) out.set(value, counted)
    else merge(into, counted)
  }
  return out
}

/** The steps view: per step, persons who reached it and their times from the step before. */
async function stepsView(plan: Plan, range: { from: number; to: number }, ctx: InsightContext, limits: FunnelLimits): Promise<unknown[]> {
  const { stepCount } = plan.rules
  // per breakdown value: per step, the seconds each person who reached it took from the step before (0 for step 0)
  let reached = new Map<string, number[][]>()
  await readPersons(plan, range, ctx, limits, (attempts, actor) => {
    const best = bestAttempt(attempts)
    if (!best) return
    const key = keyOf(best, plan, actor)
    let times = reached.get(key)
    if (!times) reached.set(key, (times = Array.from({ length: stepCount }, () => [])))
    for (let k = 0; k < best.at.length; k++) times[k].push(k === 0 ? 0 : (best.at[k] - best.at[k - 1]) / 1000)
  })
  // each step's id, type and name (an action's read once per query: ctx.entity remembers it)
  const entities = await Promise.all(plan.query.series.map((series, i) => ctx.entity(series, `query__series__${i}`)))
  const stepsOf = (times: number[][] | undefined, breakdownValue?: string) =>
    plan.query.series.map((series, order) => {
      const list = times?.[order] ?? []
      return {
        action_id: entities[order].id,
        name: series.name ?? entities[order].name,
        custom_name: series.custom_name ?? null,
        order,
        count: list.length,
        type: entities[order].type,
        people: [],
        average_conversion_time: order === 0 ? null : mean(list),
        median_conversion_time: order === 0 ? null : median(list),
        ...(breakdownValue === undefined ? {} : { breakdown: breakdownValue, breakdown_value: breakdownValue }),
      }
    })
  if (!plan.breakdown) return stepsOf(reached.get(''))
  reached = await relabel(plan, reached, ctx, (into, from) => from.forEach((list, k) => into[k].push(...list)))
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
  let counts = new Map<string, [number, number][]>()
  await readPersons(plan, range, ctx, limits, (attempts, actor) => {
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
      const key = keyOf(best, plan, actor)
      let series = counts.get(key)
      if (!series) {
        // person and group breakdowns keep a series per person (group) until their values are known
        if ((counts.size + 1) * list.length > MAX_PENDING_CELLS) unsupported(`A funnel trend by a ${plan.breakdown?.kind} property keeps at most ${MAX_PENDING_CELLS} persons × buckets: pick a larger interval or a shorter range`, 'query__breakdownFilter__breakdown')
        counts.set(key, (series = list.map(() => [0, 0])))
      }
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
  counts = await relabel(plan, counts, ctx, (into, from) => from.forEach(([e, c], i) => ((into[i][0] += e), (into[i][1] += c))))
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
    if (plan.cohorts) return { body: { results: await cohortFunnels(plan, range, ctx, limits) }, range }
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

/**
 * A cohort breakdown: the funnel of each cohort's persons (a person in two cohorts is counted in both), each cohort
 * resolved as a cohort filter is (bounded there), the answer shaped as an event breakdown's with the cohort's id as the
 * value. time_to_convert answers one histogram, as with other breakdowns.
 */
async function cohortFunnels(plan: Plan, range: { from: number; to: number }, ctx: InsightContext, limits: FunnelLimits): Promise<unknown> {
  const viz = plan.query.funnelsFilter?.funnelVizType ?? 'steps'
  if (viz === 'time_to_convert') return timeToConvertView({ ...plan, cohorts: null }, range, ctx, limits)
  const out: unknown[] = []
  for (const { id: cohort, members } of await cohortConditions(plan.cohorts!, ctx)) {
    const one: Plan = { ...plan, cohorts: null, global: and([plan.global, members]) }
    if (viz === 'trends') out.push(...(await trendsView(one, range, ctx, limits)).map((item) => ({ ...(item as object), breakdown_value: cohort })))
    else out.push((await stepsView(one, range, ctx, limits)).map((step) => ({ ...(step as object), breakdown: cohort, breakdown_value: cohort })))
  }
  return out
}
