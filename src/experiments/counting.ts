// How an experiment's results are counted: the HogQL text of the reads (every value quoted by the shared HogQL
// literal, lib/hogql-text.ts) and the join in TypeScript of exposures with metric events (exposure first, metric
// events at or after it, within the conversion window). Exposed persons are counted per variant in the store; only
// the persons who also did a metric event are joined here, one by one.
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

/** An exposure event of the experiment's flag (any person, any time). */
function isExposure(w: Window): string {
  return [
    `event = '$feature_flag_called'`,
    `properties.$feature_flag = ${str(w.flagKey)}`,
    `toString(properties.$feature_flag_response) IN (${w.variants.map(str).join(', ')})`,
  ].join(' AND ')
}

/**
 * A uniform sample of persons: those whose id ends in 8 hex digits below `threshold` (of 2^32). Person ids are
 * UUIDv5 (SHA-1 of the project and the distinct id), so those digits are uniform, and the same person is always in
 * or out: the same data gives the same sample, and a smaller rate's sample lies within a larger one's.
 */
export interface Sample {
  threshold: number
}

/** 2^32: the sample's threshold when every person counts */
export const SAMPLE_SPACE = 2 ** 32

/** The sample of about `rate` of the persons (null: every person). */
export function sampleOf(rate: number): Sample | null {
  if (!(rate < 1)) return null
  return { threshold: Math.max(1, Math.floor(rate * SAMPLE_SPACE)) }
}

export const sampleRate = (sample: Sample | null): number => (sample ? sample.threshold / SAMPLE_SPACE : 1)

/** The condition that keeps the sample's persons (lowercase hex compares as its number). */
function inSample(sample: Sample | null): string[] {
  if (!sample) return []
  return [`substring(toString(person_id), 29, 8) < ${str(sample.threshold.toString(16).padStart(8, '0'))}`]
}

/** The width of toString(timestamp): 'YYYY-MM-DD HH:MM:SS' */
const TIME_TEXT = 19

/** The first exposure as `time|variant`, the smallest such text of the person (toString(timestamp) has a fixed width). */
const FIRST_SEEN = `concat(toString(timestamp), '|', toString(properties.$feature_flag_response))`

/** The first exposure's variant, cut from FIRST_SEEN at a constant length (ClickHouse 18.16 takes no other): the
 * longest key's UTF-16 units, never fewer than its characters. */
function variantOf(firstSeen: string, w: Window): string {
  return `substring(${firstSeen}, ${TIME_TEXT + 2}, ${Math.max(1, ...w.variants.map((v) => v.length))})`
}

/**
 * Events, other than exposures, that posthog-js sends in nearly every visit and that carry `$feature/<flag>` once
 * /decide has answered it the flag (the metric's own events count too). Named so that the check reads these
 * events only, not every event of the window.
 */
export const EVIDENCE_EVENTS = ['$pageview', '$pageleave', '$autocapture', '$screen']

/**
 * An event that shows /decide answered the person the flag: one of EVIDENCE_EVENTS or the metric's events carrying
 * `$feature/<flag>`. Null when the flag's key cannot be named as a property on every store (flag keys are letters,
 * digits, '-' and '_': only keys made some other way).
 */
function seenWithFlag(events: MetricEvents, w: Window): { names: string[] | null; condition: string } | null {
  if (!canCheckExposures(w)) return null
  const flag = `properties[${str(`$feature/${w.flagKey}`)}] IS NOT NULL`
  if (events.names === null) {
    // an action's events: any event may be one
    return { names: null, condition: `(event IN (${EVIDENCE_EVENTS.map(str).join(', ')}) OR (${isMetricEvent(events)})) AND event != '$feature_flag_called' AND ${flag}` }
  }
  const names = [...new Set([...EVIDENCE_EVENTS, ...events.names])].filter((n) => n !== '$feature_flag_called')
  return { names, condition: `event IN (${names.map(str).join(', ')}) AND ${flag}` }
}

/** `event IN (…)` of these names and the exposure's, or null when an action may match any event. */
function namesRead(...lists: (readonly string[] | null)[]): string | null {
  if (lists.some((l) => l === null)) return null
  const names = [...new Set(['$feature_flag_called', ...lists.flatMap((l) => l!)])]
  return `event IN (${names.map(str).join(', ')})`
}

/**
 * The experiment in one read of the store, unsampled: per variant of the first exposure (NULL: persons not exposed)
 * and `multiple` (1: the person saw more than one variant), the persons, those of them with a metric event in the
 * window, their metric events, and those seen with the flag on another event (seenWithFlag; 0 when not checkable).
 */
export function overviewQuery(events: MetricEvents, w: Window): string {
  const exposure = isExposure(w)
  const seen = seenWithFlag(events, w)
  const names = namesRead(events.names, seen ? seen.names : [])
  const any = [`(${exposure})`, `(${isMetricEvent(events)})`, ...(seen ? [`(${seen.condition})`] : [])].join(' OR ')
  const where = [names, 'person_id IS NOT NULL', timeRange(w), `(${any})`].filter((c) => c !== null).join(' AND ')
  return `SELECT ${variantOf('first_seen', w)} AS variant, if(variants > 1, 1, 0) AS multiple, count() AS persons,
  sum(if(metric_rows > 0, 1, 0)) AS with_metric, sum(metric_rows) AS metric_events, sum(seen_elsewhere) AS seen
FROM (SELECT person_id, count(DISTINCT if(${exposure}, toString(properties.$feature_flag_response), NULL)) AS variants,
    min(if(${exposure}, ${FIRST_SEEN}, NULL)) AS first_seen, sum(if(${isMetricEvent(events)}, 1, 0)) AS metric_rows,
    ${seen ? `max(if(${seen.condition}, 1, 0))` : '0'} AS seen_elsewhere
  FROM events WHERE ${where} GROUP BY person_id)
GROUP BY variant, multiple ORDER BY variant, multiple LIMIT 1000`
}

/** Whether overviewQuery's `seen` means anything for this flag: its key can be named as a property everywhere. */
export function canCheckExposures(w: Window): boolean {
  return /^[A-Za-z0-9_-]+$/.test(w.flagKey)
}

/**
 * Exposed persons per variant of a sample of persons, counted in the store: one row per variant of the first
 * exposure and `multiple` (1: the person saw more than one variant), with the persons counted.
 */
export function exposedPerVariantQuery(w: Window, sample: Sample | null): string {
  const where = [isExposure(w), 'person_id IS NOT NULL', timeRange(w), ...inSample(sample)].join(' AND ')
  return `SELECT ${variantOf('first_seen', w)} AS variant, if(variants > 1, 1, 0) AS multiple, count() AS persons
FROM (SELECT person_id, count(DISTINCT toString(properties.$feature_flag_response)) AS variants, min(${FIRST_SEEN}) AS first_seen
  FROM events WHERE ${where} GROUP BY person_id)
GROUP BY variant, multiple ORDER BY variant, multiple LIMIT 1000`
}

/**
 * One row per person both exposed and with a metric event in the window: person_id, the first exposure's time,
 * how many variants the person saw, and the first exposure's `time|variant` (the rows exposuresFrom reads).
 */
export function joinedExposuresQuery(events: MetricEvents, w: Window, sample: Sample | null, limit: number, offset: number): string {
  const exposure = isExposure(w)
  const names = namesRead(events.names)
  const where = [...(names ? [names] : []), 'person_id IS NOT NULL', timeRange(w), `((${exposure}) OR (${isMetricEvent(events)}))`, ...inSample(sample)]
  return `SELECT person_id, min(if(${exposure}, timestamp, NULL)) AS exposed_at,
  count(DISTINCT if(${exposure}, toString(properties.$feature_flag_response), NULL)) AS variants,
  min(if(${exposure}, ${FIRST_SEEN}, NULL)) AS first_seen
FROM events WHERE ${where.join(' AND ')}
GROUP BY person_id HAVING max(if(${exposure}, 1, 0)) = 1 AND max(if(${isMetricEvent(events)}, 1, 0)) = 1
ORDER BY person_id LIMIT ${limit} OFFSET ${offset}`
}

/** A metric's nodes: a mean's source, a funnel's steps. */
export function metricNodes(metric: Metric): NonNullable<Metric['source']>[] {
  return metric.metric_type === 'mean' ? [metric.source!] : metric.series!
}

/**
 * What a metric reads: each node's condition, in order (an event's name, or an action's steps as one condition),
 * and the event names they are limited to (null when an action may match any event).
 */
export interface MetricEvents {
  conditions: string[]
  names: string[] | null
}

/** The metric's events; `actions`: the condition of each action its nodes name (resolved beforehand). */
export function metricEvents(metric: Metric, actions: ReadonlyMap<number, string> = new Map()): MetricEvents {
  let names: string[] | null = []
  const conditions = metricNodes(metric).map((node) => {
    if (node.kind === 'EventsNode') {
      names?.push(node.event)
      return `event = ${str(node.event)}`
    }
    names = null
    const condition = actions.get(node.id)
    if (condition === undefined) throw new Error(`action ${node.id} was not resolved`)
    return condition
  })
  return { conditions, names: names === null ? null : [...new Set(names as string[])] }
}

/** An event the metric reads (any person, any time). */
function isMetricEvent(events: MetricEvents): string {
  return [...new Set(events.conditions)].map((c) => `(${c})`).join(' OR ')
}

/**
 * The metric's events of the window (of the sample's persons), by person and time: person_id, timestamp, the steps
 * it is (a bit per funnel step: an event may be several), value.
 */
export function metricRowsQuery(metric: Metric, events: MetricEvents, w: Window, sample: Sample | null, limit: number, offset: number): string {
  const source = metric.metric_type === 'mean' ? metric.source! : null
  const value = source?.math === 'sum' ? `toFloat(properties[${str(source.math_property!)}])` : '1'
  const steps = metric.metric_type === 'funnel' ? events.conditions.map((c, i) => `if(${c}, ${2 ** i}, 0)`).join(' + ') : '0'
  const where = [isMetricEvent(events), 'person_id IS NOT NULL', timeRange(w), ...inSample(sample)].map((c) => `(${c})`).join(' AND ')
  return `SELECT person_id, timestamp, ${steps}, ${value} FROM events WHERE ${where}
ORDER BY person_id, timestamp, uuid LIMIT ${limit} OFFSET ${offset}`
}

export interface Exposure {
  variant: string
  at: number
}

/**
 * Exposures from rows of person_id, first exposure time, variants seen, first `time|variant` (joinedExposuresQuery's):
 * a person seen in two variants is left out ('exclude', PostHog's
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
  private readonly steps: number

  constructor(
    private readonly metric: Metric,
    private readonly exposures: ReadonlyMap<string, Exposure>,
  ) {
    this.window = conversionWindowMs(metric)
    this.steps = metric.metric_type === 'funnel' ? metric.series!.length : 0
  }

  add(rows: readonly unknown[][]): void {
    const math = this.metric.metric_type === 'mean' ? (this.metric.source!.math ?? 'total') : null
    for (const [person, timestamp, steps, value] of rows) {
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
      else if (current < this.steps && (Number(steps) & (2 ** current)) !== 0) this.values.set(key, current + 1)
    }
  }

  /** What each variant counted, the control first (the order of `variants`). */
  counts(variants: readonly string[]): VariantCounts[] {
    const funnel = this.metric.metric_type === 'funnel'
    const out = new Map(variants.map((key) => [key, { key, number_of_samples: 0, sum: 0, sum_squares: 0, ...(funnel ? { step_counts: new Array<number>(this.steps).fill(0) } : {}) } as VariantCounts]))
    for (const [person, exposure] of this.exposures) {
      const counts = out.get(exposure.variant)
      if (!counts) continue
      const reached = this.values.get(person) ?? 0
      counts.number_of_samples++
      if (funnel) {
        const done = reached === this.steps ? 1 : 0
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
