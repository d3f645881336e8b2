// What the insight charts draw, from the query API's answers (pure: unit-tested in chart-data.test.ts).

/** One line of a trend: its legend, its points and their labels (the API's, in the project's timezone). */
export interface TrendLine {
  label: string
  values: number[]
  labels: string[]
  /** a previous period drawn dashed under the current one */
  previous: boolean
  /** whether the points add up to a total (a count or a sum does; unique users per day do not) */
  additive?: boolean
}

/** Maths whose buckets cannot be added: the same person is in many days, an average of averages is no average. */
const NOT_ADDITIVE = new Set(['dau', 'weekly_active', 'monthly_active', 'unique_session', 'avg', 'min', 'max', 'median', 'p75', 'p90', 'p95', 'p99'])

export interface FunnelStep {
  name: string
  count: number
  /** of the first step's persons, 0–100 */
  percentOfFirst: number
  /** of the previous step's persons, 0–100 (100 for the first step) */
  percentOfPrevious: number
  /** median seconds from the previous step, null when nobody reached it */
  medianSeconds: number | null
}

const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$'
const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$'

/** A breakdown value as people read it. */
export function breakdownText(value: unknown): string {
  if (value === BREAKDOWN_NULL || value === null || value === undefined || value === '') return '(none)'
  if (value === BREAKDOWN_OTHER) return 'Other'
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** The lines of a TrendsQuery answer (a result that is not a series, e.g. a BoldNumber, is left out). */
export function trendLines(results: unknown): TrendLine[] {
  if (!Array.isArray(results)) return []
  const lines: TrendLine[] = []
  for (const r of results as any[]) {
    if (!r || !Array.isArray(r.data)) continue
    const previous = r.compare === true && r.compare_label === 'previous'
    let label = typeof r.label === 'string' ? r.label : 'Series'
    if (r.breakdown_value !== undefined && r.breakdown_value !== null && !String(label).includes(' - ')) label = breakdownText(r.breakdown_value)
    else if (label === BREAKDOWN_NULL || label === BREAKDOWN_OTHER) label = breakdownText(label)
    // a property's sum (average, …) without a breakdown is named by what it adds up, not by the event counted
    const math = typeof r.action?.math === 'string' ? r.action.math : ''
    const noBreakdown = r.breakdown_value === undefined || r.breakdown_value === null
    if (noBreakdown && MATH_WORDS[math] && typeof r.action?.math_property === 'string' && !r.action?.custom_name) label = `${MATH_WORDS[math]} of ${r.action.math_property}`
    if (r.compare === true) label = `${label} (${previous ? 'previous' : 'current'})`
    lines.push({ label, values: r.data.map((v: unknown) => roundTo(Number(v) || 0)), labels: Array.isArray(r.labels) ? r.labels.map(String) : [], previous, additive: !NOT_ADDITIVE.has(math) })
  }
  return lines
}

/** How a legend names a property math: "Sum of revenue". */
const MATH_WORDS: Record<string, string> = { sum: 'Sum', avg: 'Average', min: 'Minimum', max: 'Maximum', median: 'Median', p75: '75th percentile', p90: '90th percentile', p95: '95th percentile', p99: '99th percentile' }

/** A figure without float noise: sums of decimals come back as 383.93999999999994, people read 383.94. */
export function roundTo(value: number, digits = 2): number {
  return Number.isFinite(value) ? Number(value.toFixed(digits)) : value
}

/** Several figures added up, without float noise. */
export function total(values: number[]): number {
  return roundTo(values.reduce((a, b) => a + b, 0))
}

/** A lifecycle answer as lines named by status (dormant persons are negative, as PostHog draws them). */
export function lifecycleLines(results: unknown): TrendLine[] {
  const words: Record<string, string> = { new: 'New', returning: 'Returning', resurrecting: 'Resurrecting', dormant: 'Dormant' }
  const lines = trendLines(results)
  const raw = Array.isArray(results) ? (results as any[]).filter((r) => r && Array.isArray(r.data)) : []
  return lines.map((line, i) => ({ ...line, label: words[raw[i]?.status] ?? line.label }))
}

export interface FunnelGroup {
  /** the breakdown value as people read it; null when the funnel is not broken down */
  value: string | null
  steps: FunnelStep[]
}

/** A FunnelsQuery answer as one funnel per breakdown value (the API answers a list of steps per value). */
export function funnelGroups(results: unknown): FunnelGroup[] {
  if (!Array.isArray(results) || results.length === 0) return []
  if (!Array.isArray(results[0])) return [{ value: null, steps: stepsOf(results as any[]) }]
  return (results as any[][]).map((list) => ({ value: breakdownText(list[0]?.breakdown_value ?? list[0]?.breakdown), steps: stepsOf(list) }))
}

function stepsOf(list: any[]): FunnelStep[] {
  const counts = list.map((step) => Number(step?.count) || 0)
  return list.map((step, i) => ({
    name: String(step?.custom_name || step?.name || `Step ${i + 1}`),
    count: counts[i],
    percentOfFirst: percent(counts[i], counts[0]),
    percentOfPrevious: i === 0 ? 100 : percent(counts[i], counts[i - 1]),
    medianSeconds: typeof step?.median_conversion_time === 'number' ? step.median_conversion_time : null,
  }))
}

/** The steps of a FunnelsQuery answer: one list of steps, or (broken down) the steps summed over the values. */
export function funnelSteps(results: unknown): FunnelStep[] {
  if (!Array.isArray(results) || results.length === 0) return []
  const lists: any[][] = Array.isArray(results[0]) ? (results as any[][]) : [results as any[]]
  const first = lists[0] ?? []
  const counts = first.map((_, i) => lists.reduce((sum, list) => sum + (Number(list[i]?.count) || 0), 0))
  return first.map((step, i) => ({
    name: String(step?.custom_name || step?.name || `Step ${i + 1}`),
    count: counts[i],
    percentOfFirst: percent(counts[i], counts[0]),
    percentOfPrevious: i === 0 ? 100 : percent(counts[i], counts[i - 1]),
    medianSeconds: lists.length === 1 && typeof step?.median_conversion_time === 'number' ? step.median_conversion_time : null,
  }))
}

/** a of b in percent, one decimal (0 when b is 0). */
export function percent(a: number, b: number): number {
  return b > 0 ? Math.round((a / b) * 1000) / 10 : 0
}

/** Seconds as a short duration: "45s", "12m", "3.5h", "2d". */
export function durationText(seconds: number | null): string {
  if (seconds === null || !Number.isFinite(seconds)) return '—'
  if (seconds < 60) return `${Math.round(seconds)}s`
  if (seconds < 3600) return `${Math.round(seconds / 60)}m`
  if (seconds < 86400) return `${Number((seconds / 3600).toPrecision(2))}h`
  return `${Number((seconds / 86400).toPrecision(2))}d`
}

/** A linear scale from [0, top] onto [from, to] (SVG's y grows downwards: pass from > to for a value axis). */
export function linearScale(top: number, from: number, to: number): (value: number) => number {
  const span = top > 0 ? top : 1
  return (value) => from + (value / span) * (to - from)
}

/** An SVG path through the points (x by index across `width` from `left`, y by the scale). */
export function linePath(values: number[], left: number, width: number, y: (v: number) => number): string {
  if (values.length === 0) return ''
  const step = values.length > 1 ? width / (values.length - 1) : 0
  return values.map((v, i) => `${i === 0 ? 'M' : 'L'}${round(left + (values.length > 1 ? i * step : width / 2))},${round(y(v))}`).join(' ')
}

const round = (n: number) => Math.round(n * 10) / 10

/** Eight colours that stay apart for most colour blindness (Okabe–Ito, darkened for contrast on white). */
export const SERIES_COLOURS = ['#1d4ed8', '#c2410c', '#047857', '#a21caf', '#b45309', '#0e7490', '#be123c', '#4d7c0f']

export function colourOf(index: number): string {
  return SERIES_COLOURS[index % SERIES_COLOURS.length]
}

export interface RetentionRow {
  /** the cohort's date as the API wrote it (its day, week or month) */
  cohort: string
  size: number
  /** per period: persons who came back, and their share of the cohort (0–100); null for a period not over yet */
  values: ({ count: number; percent: number } | null)[]
}

/** A RetentionQuery answer as a grid: one row per cohort, one column per period ("Day 0", "Day 1", …). */
export function retentionGrid(results: unknown): { periods: string[]; rows: RetentionRow[] } {
  const cohorts = Array.isArray(results) ? (results as any[]) : []
  const widest = cohorts.reduce<any[]>((best, c) => (Array.isArray(c?.values) && c.values.length > best.length ? c.values : best), [])
  const periods = widest.map((v, k) => (typeof v?.label === 'string' ? v.label : `Period ${k}`))
  // the table ends with the current period: cohort r's period k lies after it when r + k passes the last row, and
  // is left blank (as PostHog does) rather than shown as a 0 % nobody could have reached yet
  const last = cohorts.length - 1
  const rows = cohorts.map((c, r) => {
    const values: any[] = Array.isArray(c?.values) ? c.values : []
    const size = Number(values[0]?.count) || 0
    return {
      cohort: typeof c?.date === 'string' ? c.date.slice(0, 10) : String(c?.label ?? ''),
      size,
      values: values.map((v, k) => (r + k > last ? null : { count: Number(v?.count) || 0, percent: percent(Number(v?.count) || 0, size) })),
    }
  })
  return { periods, rows }
}

/** The lifecycle's statuses in PostHog's stacking order: new, returning, resurrecting above the axis, dormant below. */
export const LIFECYCLE_ORDER = ['New', 'Returning', 'Resurrecting', 'Dormant'] as const

export interface LifecycleSegment {
  status: string
  value: number
  /** where the segment starts and ends on the value axis (dormant ones below zero) */
  from: number
  to: number
}

/**
 * Stacked bars of a lifecycle: per period, each status's segment on top of the previous ones (dormant, which the API
 * answers as negative counts, stacked downwards from zero), and the extent the value axis must reach.
 */
export function lifecycleBars(lines: TrendLine[]): { labels: string[]; bars: LifecycleSegment[][]; min: number; max: number } {
  const ordered = LIFECYCLE_ORDER.map((status) => lines.find((l) => l.label === status)).filter((l): l is TrendLine => l !== undefined)
  const n = Math.max(0, ...ordered.map((l) => l.values.length))
  let min = 0
  let max = 0
  const bars = Array.from({ length: n }, (_, i) => {
    let up = 0
    let down = 0
    return ordered.map((line) => {
      const value = line.values[i] ?? 0
      const below = line.label === 'Dormant' || value < 0
      const from = below ? down : up
      const to = from + (below ? -Math.abs(value) : value)
      if (below) down = to
      else up = to
      min = Math.min(min, to)
      max = Math.max(max, to)
      return { status: line.label, value, from, to }
    })
  })
  return { labels: ordered[0]?.labels ?? [], bars, min, max }
}
