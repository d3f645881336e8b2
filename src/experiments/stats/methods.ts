// The statistics of an experiment's results, as PostHog's new engine computes them: each variant against the control
// on the relative scale (variant mean / control mean − 1), its variance by the delta method. Pure functions.
import { normalCdf, normalQuantile, studentTCdf, studentTQuantile } from './distributions'

/** What was counted for one variant: exposed persons, and the sum and sum of squares of their metric values. */
export interface VariantCounts {
  key: string
  number_of_samples: number
  sum: number
  sum_squares: number
  step_counts?: number[]
}

export type MetricKind = 'mean' | 'funnel'
export type Method = 'bayesian' | 'frequentist'

/** fewer exposed persons than this in the control or a variant: no statistics */
export const MIN_SAMPLES = 50
/** a funnel completed by fewer persons than this in the control or a variant: no statistics */
export const MIN_FUNNEL_CONVERSIONS = 5
/** the interval's level, and the chance to win (or p-value) that makes a result significant */
export const CI_LEVEL = 0.95

export interface Estimate {
  mean: number
  /** variance of one person's value */
  variance: number
  n: number
}

/** Mean and per-person variance: a proportion's p(1 − p) for a funnel, the sample variance for a mean. */
export function estimate(counts: VariantCounts, kind: MetricKind): Estimate {
  const n = counts.number_of_samples
  const mean = n > 0 ? counts.sum / n : 0
  if (kind === 'funnel') return { mean, variance: mean * (1 - mean), n }
  const variance = n > 1 ? Math.max(0, (counts.sum_squares - (counts.sum * counts.sum) / n) / (n - 1)) : 0
  return { mean, variance, n }
}

/** Why a variant gets no statistics against the control (empty when it gets them). */
export function validationFailures(control: VariantCounts, variant: VariantCounts, kind: MetricKind): string[] {
  const failures: string[] = []
  if (control.number_of_samples < MIN_SAMPLES || variant.number_of_samples < MIN_SAMPLES) failures.push('not-enough-exposures')
  if (kind === 'funnel' && (control.sum < MIN_FUNNEL_CONVERSIONS || variant.sum < MIN_FUNNEL_CONVERSIONS)) failures.push('not-enough-metric-data')
  if (control.number_of_samples > 0 && control.sum === 0) failures.push('baseline-mean-is-zero')
  return failures
}

/** The relative effect (variant / control − 1) and its standard error by the delta method. */
export function relativeEffect(control: Estimate, variant: Estimate): { effect: number; se: number; controlVar: number; variantVar: number } {
  const controlVar = control.variance / control.n // variance of the control's mean
  const variantVar = variant.variance / variant.n
  const effect = variant.mean / control.mean - 1
  const se = Math.sqrt(variantVar / control.mean ** 2 + (variant.mean ** 2 * controlVar) / control.mean ** 4)
  return { effect, se, controlVar, variantVar }
}

export interface BayesianResult {
  chance_to_win: number
  credible_interval: [number, number]
  significant: boolean
}

/**
 * Bayesian, flat prior: the relative effect's posterior is Normal(effect, se²). chance_to_win = P(effect > 0)
 * (P(effect < 0) when the goal is to decrease); significant when it is above 0.95 or below 0.05.
 */
export function bayesian(control: Estimate, variant: Estimate, goal: 'increase' | 'decrease' = 'increase'): BayesianResult {
  const { effect, se } = relativeEffect(control, variant)
  const z = normalQuantile(1 - (1 - CI_LEVEL) / 2)
  const up = se > 0 ? normalCdf(effect / se) : effect > 0 ? 1 : effect < 0 ? 0 : 0.5
  const chance = goal === 'decrease' ? 1 - up : up
  return { chance_to_win: chance, credible_interval: [effect - z * se, effect + z * se], significant: chance > CI_LEVEL || chance < 1 - CI_LEVEL }
}

export interface FrequentistResult {
  p_value: number
  confidence_interval: [number, number]
  significant: boolean
}

/** Welch's t-test on the relative difference: degrees of freedom by Welch–Satterthwaite, two-sided p-value. */
export function frequentist(control: Estimate, variant: Estimate): FrequentistResult {
  const { effect, se, controlVar, variantVar } = relativeEffect(control, variant)
  const denominator = controlVar ** 2 / (control.n - 1) + variantVar ** 2 / (variant.n - 1)
  const df = denominator > 0 ? (controlVar + variantVar) ** 2 / denominator : Infinity
  if (!(se > 0)) return { p_value: effect === 0 ? 1 : 0, confidence_interval: [effect, effect], significant: effect !== 0 }
  const t = effect / se
  const pValue = Math.min(1, 2 * (1 - studentTCdf(Math.abs(t), df)))
  const critical = Number.isFinite(df) ? studentTQuantile(1 - (1 - CI_LEVEL) / 2, df) : normalQuantile(1 - (1 - CI_LEVEL) / 2)
  return { p_value: pValue, confidence_interval: [effect - critical * se, effect + critical * se], significant: pValue < 1 - CI_LEVEL }
}

/**
 * Persons needed per variant to detect a relative change of `mdePercent` % from the control's mean with 80 % power
 * at 5 % two-sided (Lehr's rule, n = 16 σ² / δ²). Null without a usable control (no mean, or no MDE).
 */
export function recommendedSampleSize(control: Estimate, mdePercent: number | null | undefined): number | null {
  if (!mdePercent || !(mdePercent > 0) || !(control.mean !== 0) || !(control.variance > 0)) return null
  const delta = (mdePercent / 100) * control.mean
  // rounded first: 1600.0000000002 persons is 1600
  return Math.ceil(Number(((16 * control.variance) / (delta * delta)).toFixed(6)))
}
