// An experiment's results: exposures and metric events read through the query service (the project's tenant
// condition, time limit and byte budget on every read), joined in counting.ts, then the statistics per variant.
import { ApiError } from '../http/errors'
import type { QueryService } from '../query/service'
import { exposedPersonsQuery, exposuresFrom, exposuresQuery, metricRowsCountQuery, metricRowsQuery, MetricTally, type Exposure, type Window } from './counting'
import { bayesian, estimate, frequentist, recommendedSampleSize, validationFailures, type Method, type VariantCounts } from './stats/methods'
import type { Metric } from './validation'

/** rows asked for per page of a read (the query API's own ceiling; its byte budget may cut a page shorter) */
const PAGE_ROWS = 50_000

export interface ResultCaps {
  /** EXPERIMENT_MAX_EXPOSED_PERSONS */
  maxExposedPersons: number
  /** EXPERIMENT_MAX_METRIC_ROWS */
  maxMetricRows: number
  onRefused?: (limit: 'exposed_persons' | 'metric_rows') => void
}

/**
 * What each variant counted (the control first): exposed persons, and the sum and sum of squares of their metric
 * values. Refused (400 experiment_too_large) past a cap, checked with a count before any row is read.
 */
export async function countVariants(
  query: QueryService,
  teamId: number,
  window: Window,
  metric: Metric,
  handling: 'exclude' | 'first_seen',
  caps: ResultCaps,
  signal?: AbortSignal,
): Promise<{ counts: VariantCounts[]; excluded: number }> {
  const capped = async (text: string, cap: number, limit: 'exposed_persons' | 'metric_rows', what: string) => {
    const answer = await query.run(teamId, text, signal)
    const n = Number(answer.results[0]?.[0] ?? 0)
    if (n > cap) {
      caps.onRefused?.(limit)
      const setting = limit === 'exposed_persons' ? 'EXPERIMENT_MAX_EXPOSED_PERSONS' : 'EXPERIMENT_MAX_METRIC_ROWS'
      throw new ApiError(400, 'validation_error', 'experiment_too_large', `This experiment has ${n} ${what}; results are computed for at most ${cap} (${setting}).`, 'experiment_id')
    }
  }
  /** every row of a paged read: pages of PAGE_ROWS, or fewer when the byte budget cuts one short */
  const pages = async (text: (limit: number, offset: number) => string, take: (rows: unknown[][]) => void) => {
    for (let offset = 0; ; ) {
      const answer = await query.run(teamId, text(PAGE_ROWS, offset), signal)
      take(answer.results)
      offset += answer.results.length
      if (!answer.hasMore || answer.results.length === 0) return
    }
  }

  await capped(exposedPersonsQuery(window), caps.maxExposedPersons, 'exposed_persons', 'exposed persons')
  const exposures = new Map<string, Exposure>()
  let excluded = 0
  await pages((limit, offset) => exposuresQuery(window, limit, offset), (rows) => (excluded += exposuresFrom(rows, handling, exposures).excluded))
  const tally = new MetricTally(metric, exposures)
  await capped(metricRowsCountQuery(metric, window), caps.maxMetricRows, 'metric_rows', "metric events in the experiment's window")
  await pages((limit, offset) => metricRowsQuery(metric, window, limit, offset), (rows) => tally.add(rows))
  return { counts: tally.counts(window.variants), excluded }
}

/** The statistics of each variant against the control, in PostHog's new-engine shape. */
export function resultsAnswer(metric: Metric, counts: VariantCounts[], method: Method, mde: number | null | undefined, excluded: number) {
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
    is_cached: false,
    last_refresh: new Date().toISOString(),
  }
}

