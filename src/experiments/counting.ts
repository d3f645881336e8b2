// How an experiment's results are counted, without joins: the HogQL text of the exposure and metric reads (every
// value quoted by the shared HogQL literal, lib/hogql-text.ts), and the pure join of the two in TypeScript
// (exposure first, metric events at or after it, within the conversion window).
import { str } from '../lib/hogql-text'
import type { Metric } from './validation'
import type { VariantCounts } from './stats/methods'

/** A HogQL time: toDateTime('YYYY-MM-DD HH:MM:SS') in UTC (whole seconds). */
export function hogqlTime(ms: number): string {
  return `toDateTime(${str(new Date(ms).toISOString().slice(0, 19).replace('T', ' '))})`
}

export interface Window {
  flagKey: string
  variants: readonly string[]
  /** ms, inclusive */
  from: number
  /** ms, exclusive */
  to: number
}

const timeRange = (w: Window) => `timestamp >= ${hogqlTime(Math.floor(w.from / 1000) * 1000)} AND timestamp < ${hogqlTime(Math.ceil(w.to / 1000) * 1000)}`

function exposureFilter(w: Window): string {
  return [
    `event = '$feature_flag_called'`,
    `properties.$feature_flag = ${str(w.flagKey)}`,
    `toString(properties.$feature_flag_response) IN (${w.variants.map(str).join(', ')})`,
    'person_id IS NOT NULL',
    timeRange(w),
  ].join(' AND ')
}

/** How many persons were exposed (checked against the cap before any row is read). */
export function exposedPersonsQuery(w: Window): string {
  return `SELECT count() FROM (SELECT person_id FROM events WHERE ${exposureFilter(w)} GROUP BY person_id)`
}

/** The width of toString(timestamp): 'YYYY-MM-DD HH:MM:SS' */
const TIME_TEXT = 19

/**
 * One row per exposed person: person_id, the first exposure's time, how many variants the person saw, and the first
 * exposure's variant (the smallest `time|variant`: toString(timestamp) has a fixed width).
 */
export function exposuresQuery(w: Window, limit: number, offset: number): string {
  return `SELECT person_id, min(timestamp), count(DISTINCT toString(properties.$feature_flag_response)),
  min(concat(toString(timestamp), '|', toString(properties.$feature_flag_response)))
FROM events WHERE ${exposureFilter(w)} GROUP BY person_id ORDER BY person_id LIMIT ${limit} OFFSET ${offset}`
}

/** The events a metric reads: a mean's source, a funnel's steps. */
export function metricEvents(metric: Metric): string[] {
  const nodes = metric.metric_type === 'mean' ? [metric.source!] : metric.series!
  return [...new Set(nodes.map((n) => n.event))]
}

function metricFilter(metric: Metric, w: Window): string {
  return [`event IN (${metricEvents(metric).map(str).join(', ')})`, 'person_id IS NOT NULL', timeRange(w)].join(' AND ')
}

export function metricRowsCountQuery(metric: Metric, w: Window): string {
  return `SELECT count() FROM events WHERE ${metricFilter(metric, w)}`
}

/** The metric's events of the window, by person and time: person_id, timestamp, event, value. */
export function metricRowsQuery(metric: Metric, w: Window, limit: number, offset: number): string {
  const source = metric.metric_type === 'mean' ? metric.source! : null
  const value = source?.math === 'sum' ? `toFloat(properties[${str(source.math_property!)}])` : '1'
  return `SELECT person_id, timestamp, event, ${value} FROM events WHERE ${metricFilter(metric, w)}
ORDER BY person_id, timestamp, uuid LIMIT ${limit} OFFSET ${offset}`
}

export interface Exposure {
  variant: string
  at: number
}

/**
 * Exposures from the rows of exposuresQuery: a person seen in two variants is left out ('exclude', PostHog's
 * `$multiple`, the default) or kept in the variant of their first exposure ('first_seen').
 */
export function exposuresFrom(rows: readonly unknown[][], handling: 'exclude' | 'first_seen', into = new Map<string, Exposure>()): { exposures: Map<string, Exposure>; excluded: number } {
  let excluded = 0
  for (const [person, first, variants, firstSeen] of rows) {
    if (Number(variants) > 1 && handling === 'exclude') {
      excluded++
      continue
    }
    into.set(String(person), { variant: String(firstSeen).slice(TIME_TEXT + 1), at: Date.parse(String(first)) })
  }
  return { exposures: into, excluded }
}

const UNIT_MS: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000, month: 30 * 86_400_000 }

/** The conversion window in ms (Infinity: until the experiment's end). A month is 30 days. */
export function conversionWindowMs(metric: Metric): number {
  if (!metric.conversion_window) return Infinity
  return metric.conversion_window * UNIT_MS[metric.conversion_window_unit ?? 'day']!
}

/**
 * Per-person values, fed page by page with metricRowsQuery's rows (sorted by person, then time): only events at or
 * after the person's exposure and within the conversion window count.
 */
export class MetricTally {
  private readonly values = new Map<string, number>()
  private readonly window: number
  private readonly steps: string[]

  constructor(
    private readonly metric: Metric,
    private readonly exposures: ReadonlyMap<string, Exposure>,
  ) {
    this.window = conversionWindowMs(metric)
    this.steps = metric.metric_type === 'funnel' ? metric.series!.map((s) => s.event) : []
  }

  add(rows: readonly unknown[][]): void {
    const math = this.metric.metric_type === 'mean' ? (this.metric.source!.math ?? 'total') : null
    for (const [person, timestamp, event, value] of rows) {
      const exposure = this.exposures.get(String(person))
      if (!exposure) continue
      const at = Date.parse(String(timestamp))
      if (at < exposure.at || at - exposure.at > this.window) continue
      const key = String(person)
      const current = this.values.get(key) ?? 0
      if (math === 'dau') this.values.set(key, 1)
      else if (math === 'sum') this.values.set(key, current + (Number.isFinite(Number(value)) && value !== null ? Number(value) : 0))
      else if (math === 'total') this.values.set(key, current + 1)
      // funnel: the steps reached so far, in order (the earliest event that matches the next step)
      else if (current < this.steps.length && this.steps[current] === event) this.values.set(key, current + 1)
    }
  }

  /** What each variant counted, the control first (the order of `variants`). */
  counts(variants: readonly string[]): VariantCounts[] {
    const funnel = this.metric.metric_type === 'funnel'
    const out = new Map(variants.map((key) => [key, { key, number_of_samples: 0, sum: 0, sum_squares: 0, ...(funnel ? { step_counts: this.steps.map(() => 0) } : {}) } as VariantCounts]))
    for (const [person, exposure] of this.exposures) {
      const counts = out.get(exposure.variant)
      if (!counts) continue
      const reached = this.values.get(person) ?? 0
      counts.number_of_samples++
      if (funnel) {
        const done = reached === this.steps.length ? 1 : 0
        counts.sum += done
        counts.sum_squares += done
        for (let i = 0; i < reached; i++) counts.step_counts![i]!++
      } else {
        counts.sum += reached
        counts.sum_squares += reached * reached
      }
    }
    return [...out.values()]
  }
}
