// Web analytics: WebOverviewQuery (visitors, views, sessions, session duration, bounce rate, each against the previous
// period) and WebStatsTableQuery (the same by page, entry page, referrer, browser, country…), PostHog's shapes and
// rules. A session is the events sharing a `$session_id`; it belongs to the range its first event falls in, and is
// read whole from a window a day wider on each side (posthog-js ends a session after 24 hours). A session bounced when
// it has one pageview, no autocaptured interaction and lasted under 10 seconds. Visitors are persons, personless
// visitors included (each its own person). Everything runs as HogQL over the checked compiler, on every store.
import { errors } from '../http/errors'
import { comparisonRange, type ResolvedDateRange } from './date-range'
import { and, inRange, prop, str, userProp } from './hogql'
import type { InsightContext, KindAnswer } from './service'
import { WEB_BREAKDOWNS, type WebBreakdown } from './web-model'

/** A session is at most this long (posthog-js starts a new one after 24 hours). */
const SESSION_SPAN_MS = 24 * 60 * 60 * 1000
/** PostHog's bounce rule: a single pageview, no autocapture, and shorter than this. */
const BOUNCE_SECONDS = 10
const DEFAULT_DATE_FROM = '-7d'
const DEFAULT_LIMIT = 10
const NULL_LABEL = '(none)'

interface Common {
  dateRange?: { date_from?: string | null; date_to?: string | null; explicitDate?: boolean | null } | null
  properties?: unknown
  compareFilter?: { compare?: boolean | null; compare_to?: string | null } | null
}

export type WebOverviewNode = Common & { kind: 'WebOverviewQuery' }
export type WebStatsTableNode = Common & {
  kind: 'WebStatsTableQuery'
  breakdownBy: WebBreakdown
  includeBounceRate?: boolean | null
  orderBy?: string[] | null
  limit?: number | null
  offset?: number | null
}

const PAGE_EVENTS = `event IN (${str('$pageview')}, ${str('$screen')})`
const duration = 'dateDiff(\'second\', started, ended)'
const bounced = `if(views > 1 OR autocaptures > 0 OR ${duration} >= ${BOUNCE_SECONDS}, 0, 1)`

/**
 * One row per session that started in the range and has a pageview: its person, start, end, views, autocaptures,
 * and (`extra`) more of its aggregates.
 */
function sessions(range: ResolvedDateRange, filters: string | null, extra: string[] = []): string {
  // the session's start in the range, on the same whole seconds as every other range (inRange names only the column)
  const session = prop('$session_id')
  const window = inRange(range.from - SESSION_SPAN_MS, range.to + SESSION_SPAN_MS)
  const columns = [
    'any(person_id) AS person',
    'min(timestamp) AS started',
    'max(timestamp) AS ended',
    `sum(if(${PAGE_EVENTS}, 1, 0)) AS views`,
    `sum(if(event = ${str('$autocapture')}, 1, 0)) AS autocaptures`,
    ...extra,
  ]
  return `SELECT ${columns.join(', ')} FROM events WHERE ${and([`${session} IS NOT NULL`, window, filters])} GROUP BY ${session} HAVING ${and([inRange(range.from, range.to).replaceAll('timestamp', 'min(timestamp)'), `sum(if(${PAGE_EVENTS}, 1, 0)) > 0`])}`
}

async function ranges(node: Common, ctx: InsightContext): Promise<{ current: ResolvedDateRange; previous: ResolvedDateRange | null }> {
  const current = await ctx.dateRange({ date_from: DEFAULT_DATE_FROM, ...(node.dateRange ?? {}) }, 'day')
  const compare = node.compareFilter?.compare === true
  return { current, previous: compare ? comparisonRange(current, ctx.project.timezone, node.compareFilter?.compare_to) : null }
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v))

/** PostHog's change against the previous period, in percent (null without one, or from zero). */
function change(value: number | null, previous: number | null): number | null {
  if (value === null || previous === null || previous === 0) return null
  return Math.round(((value - previous) / previous) * 100)
}

export async function runWebOverview(node: WebOverviewNode, ctx: InsightContext): Promise<KindAnswer> {
  const { current, previous } = await ranges(node, ctx)
  const filters = await ctx.properties(node.properties as never, 'query__properties')
  const figures = async (range: ResolvedDateRange) => {
    const answer = await ctx.hogql(`SELECT count(DISTINCT person), sum(views), count(), avg(${duration}), avg(${bounced}) FROM (${sessions(range, filters)})`)
    const [visitors, views, count, seconds, bounce] = answer.results[0] ?? []
    const sessionsCounted = num(count)
    return {
      visitors: num(visitors),
      views: num(views),
      sessions: sessionsCounted,
      'session duration': sessionsCounted === 0 ? null : num(seconds),
      'bounce rate': sessionsCounted === 0 ? null : num(bounce) * 100,
    }
  }
  const now = await figures(current)
  const before = previous ? await figures(previous) : null
  const kinds = { visitors: 'unit', views: 'unit', sessions: 'unit', 'session duration': 'duration_s', 'bounce rate': 'percentage' } as const
  const results = (Object.keys(kinds) as (keyof typeof kinds)[]).map((key) => ({
    key,
    kind: kinds[key],
    value: now[key],
    previous: before ? before[key] : null,
    changeFromPreviousPct: before ? change(now[key], before[key]) : null,
    isIncreaseBad: key === 'bounce rate' ? true : null,
  }))
  return {
    body: { results, samplingRate: { numerator: 1, denominator: 1 }, dateFrom: current.date_from, dateTo: current.date_to, usedPreAggregatedTables: false },
    range: current,
  }
}

/** Rows of one period: breakdown value → [visitors, views, bounce rate %|null]. */
type PeriodRows = Map<string, [number, number, number | null]>

/** The shown values a read of another period (or of entry bounce rates) may name in its statement, at most. */
const MAX_ONLY_CHARS = 64 * 1024

/**
 * A condition on `column` holding one of the shown values (the `(none)` row: NULL or ''), or null when naming them
 * would make the statement too long (the read is then capped by rows instead).
 */
function oneOf(column: string, values: readonly string[]): string | null {
  const named = values.filter((v) => v !== NULL_LABEL).map(str)
  if (named.reduce((n, v) => n + v.length + 2, 0) > MAX_ONLY_CHARS) return null
  const parts = named.length > 0 ? [`${column} IN (${named.join(', ')})`] : []
  if (values.includes(NULL_LABEL)) parts.push(`${column} IS NULL`, `${column} = ''`)
  return parts.length === 0 ? '1 = 0' : parts.join(' OR ')
}

/**
 * One period's rows by the node's breakdown, at most `cap`; with `only`, of those values alone (the rows shown): the
 * previous period and the entry bounce rates are read for them, not for the 10,000 values of the most visitors.
 */
async function tableRows(node: WebStatsTableNode, range: ResolvedDateRange, filters: string | null, ctx: InsightContext, cap: number, only?: readonly string[]): Promise<{ rows: PeriodRows; more: boolean }> {
  const breakdown = WEB_BREAKDOWNS[node.breakdownBy] as { property: string; initial: boolean; last?: boolean }
  const value = userProp(breakdown.property, 'query__breakdownBy')
  const order = 'ORDER BY visitors DESC, pageviews DESC, value ASC'
  let text: string
  if (breakdown.initial) {
    // a session-level value: the session's first event's, or the last one's that carries it (the exit page)
    const pick = breakdown.last ? `argMaxIf(${value}, timestamp, ${value} IS NOT NULL)` : `argMin(${value}, timestamp)`
    const inner = sessions(range, filters, [`${pick} AS value`])
    const where = only ? oneOf('value', only) : null
    text = `SELECT value, count(DISTINCT person) AS visitors, sum(views) AS pageviews, avg(${bounced}) FROM (${inner})${where ? ` WHERE ${where}` : ''} GROUP BY value ${order} LIMIT ${cap + 1}`
  } else {
    // a page-level value: every pageview (or screen) of a session counts where it happened
    const event = node.breakdownBy === 'ScreenName' ? str('$screen') : str('$pageview')
    const where = and([`event = ${event}`, `${prop('$session_id')} IS NOT NULL`, inRange(range.from, range.to), filters, only ? oneOf(value, only) : null])
    text = `SELECT ${value} AS value, count(DISTINCT person_id) AS visitors, count() AS pageviews FROM events WHERE ${where} GROUP BY value ${order} LIMIT ${cap + 1}`
  }
  const answer = await ctx.hogql(text)
  const rows: PeriodRows = new Map()
  for (const row of answer.results.slice(0, cap)) {
    const label = row[0] === null || row[0] === undefined || row[0] === '' ? NULL_LABEL : String(row[0])
    rows.set(label, [num(row[1]), num(row[2]), row[3] === undefined || row[3] === null ? null : num(row[3]) * 100])
  }
  return { rows, more: answer.results.length > cap }
}

export async function runWebStatsTable(node: WebStatsTableNode, ctx: InsightContext): Promise<KindAnswer> {
  const { current, previous } = await ranges(node, ctx)
  const filters = await ctx.properties(node.properties as never, 'query__properties')
  const limit = node.limit ?? DEFAULT_LIMIT
  const offset = node.offset ?? 0
  const now = await tableRows(node, current, filters, ctx, offset + limit)
  const entries = [...now.rows.entries()].slice(offset, offset + limit)
  const shown = entries.map(([value]) => value)
  // the previous period's figures of the same values (a value new in this period has none)
  const before = previous ? (await tableRows(node, previous, filters, ctx, 10_000, shown)).rows : null
  // a page's bounce rate is that of the sessions entering on it, as PostHog counts it
  let entryBounce: PeriodRows | null = null
  if (node.breakdownBy === 'Page' && node.includeBounceRate) entryBounce = (await tableRows({ ...node, breakdownBy: 'InitialPage' }, current, filters, ctx, 10_000, shown)).rows
  const totalVisitors = [...now.rows.values()].reduce((sum, r) => sum + r[0], 0)
  const withBounce = node.includeBounceRate === true && node.breakdownBy !== 'ScreenName'
  const results = entries.map(([value, [visitors, views, bounce]]) => {
    const prior = before?.get(value)
    const row: unknown[] = [value, [visitors, before ? (prior?.[0] ?? 0) : null], [views, before ? (prior?.[1] ?? 0) : null]]
    if (withBounce) {
      const rate = node.breakdownBy === 'Page' ? (entryBounce?.get(value)?.[2] ?? null) : bounce
      row.push([rate, before ? (prior?.[2] ?? null) : null])
    }
    row.push(totalVisitors === 0 ? 0 : visitors / totalVisitors, '')
    return row
  })
  const columns = ['context.columns.breakdown_value', 'context.columns.visitors', 'context.columns.views']
  if (withBounce) columns.push('context.columns.bounce_rate')
  columns.push('context.columns.ui_fill_fraction', 'context.columns.cross_sell')
  if (node.orderBy && node.orderBy.length > 0 && !['Visitors', 'Views', 'BounceRate'].includes(node.orderBy[0]!)) {
    throw errors.validation('unsupported', `orderBy ${JSON.stringify(node.orderBy[0])} is not supported: Visitors, Views or BounceRate`, 'query__orderBy')
  }
  sortRows(results, node.orderBy ?? null, withBounce)
  return {
    body: { columns, results, hasMore: now.more || now.rows.size > offset + limit, limit, offset, samplingRate: { numerator: 1, denominator: 1 }, usedPreAggregatedTables: false },
    range: current,
  }
}

/** PostHog's ordering: the chosen column (descending unless `ASC`), then visitors, views, the value. */
function sortRows(rows: unknown[][], orderBy: string[] | null, withBounce: boolean): void {
  const column = orderBy?.[0] === 'Views' ? 2 : orderBy?.[0] === 'BounceRate' && withBounce ? 3 : 1
  const ascending = orderBy?.[1] === 'ASC'
  const current = (row: unknown[], i: number) => ((row[i] as [number | null, unknown])[0] ?? -1) as number
  rows.sort((a, b) => {
    const first = ascending ? current(a, column) - current(b, column) : current(b, column) - current(a, column)
    return first || current(b, 1) - current(a, 1) || current(b, 2) - current(a, 2) || String(a[0]).localeCompare(String(b[0]))
  })
}
