// An experiment's results as the page shows them (pure: unit-tested in results.test.ts).

export interface VariantCounts {
  key: string
  number_of_samples: number
  sum: number
  sum_squares?: number
  step_counts?: number[]
}

export interface VariantResult extends VariantCounts {
  chance_to_win?: number | null
  credible_interval?: [number, number] | null
  p_value?: number | null
  confidence_interval?: [number, number] | null
  significant?: boolean
  validation_failures?: string[]
}

export interface ResultsAnswer {
  baseline: VariantCounts
  variant_results: VariantResult[]
  exposures_excluded?: number
  recommended_sample_size?: number | null
}

export interface ResultRow {
  variant: string
  exposures: number
  /** conversion (funnel, in %) or mean per person */
  value: string
  chanceToWin: string
  interval: string
  /** "Significant", "Not significant", or "—" for the control and a variant without statistics yet */
  verdict: string
}

const FAILURES: Record<string, string> = {
  'not-enough-exposures': 'fewer than 50 persons were exposed to the control or this variant',
  'not-enough-metric-data': 'fewer than 5 persons completed the metric in the control or this variant',
  'baseline-mean-is-zero': "the control's metric is still zero",
}

/** Why a variant has no statistics yet, in words. */
export function failureText(code: string): string {
  return FAILURES[code] ?? code
}

function percentText(fraction: number): string {
  return `${Number((fraction * 100).toFixed(1))}%`
}

/** The value column: a funnel's conversion (sum of persons who completed / samples), a mean's mean. */
export function valueText(counts: VariantCounts, metricType: string): string {
  if (counts.number_of_samples <= 0) return '—'
  const mean = counts.sum / counts.number_of_samples
  // the counts beside the share: 10 % of 20 persons and 10 % of 2,000 do not weigh the same
  return metricType === 'funnel' ? `${percentText(mean)} (${counts.sum} / ${counts.number_of_samples})` : String(Number(mean.toFixed(3)))
}

/** A variant's verdict, once it has statistics: the API's `significant`. */
export function verdictText(v: VariantResult): string {
  if ((v.validation_failures ?? []).length > 0 || typeof v.significant !== 'boolean') return '—'
  return v.significant ? 'Significant' : 'Not significant'
}

/** The effect's interval, relative to the control: "-12.5% to +40%". */
export function intervalText(interval: [number, number] | null | undefined): string {
  if (!interval) return '—'
  const signed = (v: number) => `${v > 0 ? '+' : ''}${Number((v * 100).toFixed(1))}%`
  return `${signed(interval[0])} to ${signed(interval[1])}`
}

/** One row per variant, the control first (it has no chance or interval of its own). */
export function resultRows(answer: ResultsAnswer, metricType: string): ResultRow[] {
  const control: ResultRow = { variant: answer.baseline.key, exposures: answer.baseline.number_of_samples, value: valueText(answer.baseline, metricType), chanceToWin: '—', interval: '—', verdict: '—' }
  return [
    control,
    ...answer.variant_results.map((v) => {
      const chance = typeof v.chance_to_win === 'number' ? percentText(v.chance_to_win) : typeof v.p_value === 'number' ? `p = ${Number(v.p_value.toPrecision(3))}` : '—'
      return { variant: v.key, exposures: v.number_of_samples, value: valueText(v, metricType), chanceToWin: chance, interval: intervalText(v.credible_interval ?? v.confidence_interval), verdict: verdictText(v) }
    }),
  ]
}

/** The reasons, in words, why some variant has no statistics yet (empty: every variant has them). */
export function notEnoughData(answer: ResultsAnswer): string[] {
  const out = new Set<string>()
  for (const v of answer.variant_results) for (const code of v.validation_failures ?? []) out.add(failureText(code))
  return [...out]
}
