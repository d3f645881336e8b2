// An experiment's results: exposed persons counted per variant in the store, the metric joined in TypeScript for
// the persons who did a metric event (counting.ts), every read through the query service (the project's tenant
// condition, time limit and byte budget), then the statistics per variant. Always answered: past a bound, the
// persons are a uniform sample (by person id) and the answer says at what rate.
import type { QueryService } from '../query/service'
import {
  canCheckExposures, EVIDENCE_EVENTS, exposedPerVariantQuery, exposuresFrom, joinedExposuresQuery, metricEvents, metricRowsQuery, MetricTally, overviewQuery, sampleOf, sampleRate,
  type Exposure, type MetricEvents, type Sample, type Window,
} from './counting'
import { bayesian, estimate, frequentist, recommendedSampleSize, validationFailures, type Method, type VariantCounts } from './stats/methods'
import type { Metric } from './validation'

/** rows asked for per page of a read (the query API's own ceiling; its byte budget may cut a page shorter) */
const PAGE_ROWS = 50_000

export type SampledBy = 'exposed_persons' | 'metric_rows'

export interface ResultCaps {
  /** EXPERIMENT_MAX_EXPOSED_PERSONS: persons joined with their metric events in TypeScript before a sample is taken */
  maxExposedPersons: number
  /** EXPERIMENT_MAX_METRIC_ROWS: metric events read before a sample is taken */
  maxMetricRows: number
  /** a result computed on a sample, by the bound that made it one */
  onSampled?: (limit: SampledBy) => void
}

/** Exposed persons (every one, unsampled) and those of them seen with the flag on another event. */
export interface ExposureEvidence {
  exposed: number
  seen: number
}

export interface VariantTally {
  /** per variant, the control first */
  counts: VariantCounts[]
  /** persons left out for having seen two variants ('exclude') */
  excluded: number
  /** the share of persons counted: 1, or the sample's rate */
  samplingRate: number
  /** the bounds that made it a sample (empty: every person counted) */
  sampledBy: SampledBy[]
  /** persons to join with their metric events, and metric events to read, before any sample (for its note) */
  joined: { persons: number; metricEvents: number }
  /** what the store says of the exposures' origin (null: the flag's key cannot be checked) */
  evidence: ExposureEvidence | null
}

/**
 * What each variant counted (the control first): exposed persons, and the sum and sum of squares of their metric
 * values. One read of the store counts the exposed persons per variant, whatever their number, and says how many
 * of them did a metric event; only those are read and joined here with the metric's events, all of them while
 * within the caps, else a uniform sample of persons chosen so that the join stays within them, applied to every
 * count so that the variants stay comparable.
 */
export async function countVariants(
  query: QueryService,
  teamId: number,
  window: Window,
  metric: Metric,
  handling: 'exclude' | 'first_seen',
  caps: ResultCaps,
  signal?: AbortSignal,
  /** the metric's events (an action's resolved beforehand); by default its events' names */
  events: MetricEvents = metricEvents(metric),
): Promise<VariantTally> {
  /** every row of a paged read: pages of PAGE_ROWS, or fewer when the byte budget cuts one short */
  const pages = async (text: (limit: number, offset: number) => string, take: (rows: unknown[][]) => void) => {
    for (let offset = 0; ; ) {
      const answer = await query.run(teamId, text(PAGE_ROWS, offset), signal)
      take(answer.results)
      offset += answer.results.length
      if (!answer.hasMore || answer.results.length === 0) return
    }
  }
  /** exposed persons per variant from rows of (variant, multiple, persons, …), the persons in two left out or not */
  const perVariant = (rows: unknown[][]) => {
    const exposed = new Map(window.variants.map((v) => [v, 0]))
    let excluded = 0
    for (const [variant, multiple, count] of rows) {
      const key = variant === null ? null : String(variant)
      if (key === null || !exposed.has(key)) continue
      if (Number(multiple) === 1 && handling === 'exclude') excluded += Number(count)
      else exposed.set(key, exposed.get(key)! + Number(count))
    }
    return { exposed, excluded }
  }

  const overview = (await query.run(teamId, overviewQuery(events, window), signal)).results
  let persons = 0
  let metricEvents = 0
  const evidence = { exposed: 0, seen: 0 }
  for (const [variant, , count, withMetric, events, seen] of overview) {
    metricEvents += Number(events)
    if (variant === null) continue // persons who did metric events and were never exposed
    persons += Number(withMetric)
    evidence.exposed += Number(count)
    evidence.seen += Number(seen)
  }
  // with nobody to join, no metric event is read: nothing to sample
  const sampledBy: SampledBy[] = []
  if (persons > caps.maxExposedPersons) sampledBy.push('exposed_persons')
  if (persons > 0 && metricEvents > caps.maxMetricRows) sampledBy.push('metric_rows')
  const rates = [1, ...sampledBy.map((limit) => (limit === 'exposed_persons' ? caps.maxExposedPersons / persons : caps.maxMetricRows / metricEvents))]
  const sample: Sample | null = sampleOf(Math.min(...rates))
  for (const limit of sampledBy) caps.onSampled?.(limit)

  const { exposed, excluded } = perVariant(sample ? (await query.run(teamId, exposedPerVariantQuery(window, sample), signal)).results : overview)
  const exposures = new Map<string, Exposure>()
  if (persons > 0) await pages((limit, offset) => joinedExposuresQuery(events, window, sample, limit, offset), (rows) => exposuresFrom(rows, handling, exposures))
  const tally = new MetricTally(metric, exposures)
  if (exposures.size > 0) await pages((limit, offset) => metricRowsQuery(metric, events, window, sample, limit, offset), (rows) => tally.add(rows))
  // the joined persons carry the sums; every exposed person (most did nothing) is a sample
  const counts = tally.counts(window.variants).map((c) => ({ ...c, number_of_samples: exposed.get(c.key) ?? 0 }))
  return {
    counts,
    excluded,
    samplingRate: sampleRate(sample),
    sampledBy,
    joined: { persons, metricEvents },
    evidence: canCheckExposures(window) ? evidence : null,
  }
}

/** unexplained exposed persons below this many are never called a flood (a small experiment's noise) */
export const FLOOD_MIN_PERSONS = 100

/**
 * A flood: more exposed persons without a trace of a /decide answer for the flag than with one (at least
 * FLOOD_MIN_PERSONS of them). posthog-js sends its events with `$feature/<flag>` once its flags have loaded; an
 * exposed person with no such event (EVIDENCE_EVENTS or the metric's) was most likely never answered, though
 * server-side SDKs that do not send `$feature/<flag>` look the same.
 */
export function isFlood(evidence: ExposureEvidence | null): evidence is ExposureEvidence {
  if (!evidence) return false
  const unexplained = evidence.exposed - evidence.seen
  return unexplained >= FLOOD_MIN_PERSONS && unexplained > evidence.seen
}

export interface ResultWarning {
  type: 'exposures_unexplained' | 'sampled'
  message: string
  [detail: string]: unknown
}

/** What the answer says besides the numbers: a sample, a likely flood. */
export function resultWarnings(window: Window, tally: VariantTally): ResultWarning[] {
  const evidence = tally.evidence
  const warnings: ResultWarning[] = []
  if (tally.sampledBy.length > 0) {
    const rate = tally.samplingRate
    warnings.push({
      type: 'sampled',
      message:
        `Counted on a uniform sample of ${(rate * 100).toPrecision(3)} % of persons (by person id, the same sample every time for the same data): ` +
        `${tally.joined.persons} exposed persons with metric events and ${tally.joined.metricEvents} metric events in the window ` +
        `are more than EXPERIMENT_MAX_EXPOSED_PERSONS / EXPERIMENT_MAX_METRIC_ROWS allow to join one by one.`,
      sampling_rate: rate,
      limits: tally.sampledBy,
    })
  }
  if (isFlood(evidence)) {
    const unexplained = evidence.exposed - evidence.seen
    warnings.push({
      type: 'exposures_unexplained',
      message:
        `${unexplained} of ${evidence.exposed} exposed persons sent no ${EVIDENCE_EVENTS.join(', ')} or metric event carrying $feature/${window.flagKey} in the window: ` +
        'more exposures than the flag answers /decide gave would explain. Exposures can be sent by anyone holding the project token; ' +
        "if these persons were exposed by a server-side SDK that does not send $feature/<flag> with other events, this is expected.",
      exposed_persons: evidence.exposed,
      persons_seen_with_flag: evidence.seen,
    })
  }
  return warnings
}

/** The statistics of each variant against the control, in PostHog's new-engine shape. */
export function resultsAnswer(metric: Metric, counts: VariantCounts[], method: Method, mde: number | null | undefined, excluded: number, extra: { samplingRate: number; warnings: ResultWarning[] } = { samplingRate: 1, warnings: [] }) {
  const [baseline, ...others] = counts
  const kind = metric.metric_type
  const control = estimate(baseline!, kind)
  const goal = metric.goal ?? 'increase'
  return {
    kind: 'ExperimentQuery' as const,
    metric,
    baseline: baseline!,
    variant_results: others.map((variant) => {
      const failures = validationFailures(baseline!, variant, kind)
      const base = { ...variant, method, validation_failures: failures }
      if (failures.length > 0) {
        return method === 'bayesian' ? { ...base, chance_to_win: null, credible_interval: null, significant: false } : { ...base, p_value: null, confidence_interval: null, significant: false }
      }
      const other = estimate(variant, kind)
      return method === 'bayesian' ? { ...base, ...bayesian(control, other, goal) } : { ...base, ...frequentist(control, other) }
    }),
    recommended_sample_size: recommendedSampleSize(control, mde),
    exposures_excluded: excluded,
    sampling_rate: extra.samplingRate,
    warnings: extra.warnings,
    is_cached: false,
    last_refresh: new Date().toISOString(),
  }
}

