// The experiments API's shape, as far as the console reads it.

export interface ExperimentMetric {
  kind: 'ExperimentMetric'
  metric_type: 'funnel' | 'mean'
  source?: { kind: 'EventsNode'; event: string; math?: string; math_property?: string }
  series?: { kind: 'EventsNode'; event: string }[]
}

export interface Experiment {
  id: number
  name: string
  description: string
  feature_flag_key: string | null
  feature_flag: { id: number; key: string; active: boolean } | null
  parameters: { feature_flag_variants?: { key: string; rollout_percentage: number }[]; minimum_detectable_effect?: number | null } | null
  metrics: ExperimentMetric[]
  start_date: string | null
  end_date: string | null
  created_at: string | null
  status: 'draft' | 'running' | 'complete'
}

export const STATUS_TEXT: Record<Experiment['status'], string> = { draft: 'Draft', running: 'Running', complete: 'Complete' }

/** The metric in words: "conversion to signup → purchase" or "mean of purchase (sum of price)". */
export function metricText(metric: ExperimentMetric | undefined): string {
  if (!metric) return 'no metric'
  if (metric.metric_type === 'funnel') return `conversion to ${(metric.series ?? []).map((s) => s.event).join(' → ')}`
  const source = metric.source
  const math = source?.math === 'sum' ? ` (sum of ${source.math_property ?? ''})` : source?.math === 'dau' ? ' (persons who did it)' : ' (count per person)'
  return `mean of ${source?.event ?? ''}${math}`
}
