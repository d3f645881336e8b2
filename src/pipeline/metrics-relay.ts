// Metrics recorded in the flush worker are sent to the capture thread, which owns the Prometheus registry.
import type { Metrics } from '../ops/metrics'

export type CounterName = 'events' | 'flushedEvents' | 'deadLettered' | 'flushFailures' | 'personUpdates' | 'definitionsRefused' | 'recordingBytesRefused' | 'errorTrackingIssues'
export type HistogramName = 'flushDuration' | 'flushBatchSize'

export interface PipelineMetrics {
  inc(name: CounterName, labels?: Record<string, string>, by?: number): void
  observe(name: HistogramName, value: number): void
}

export interface MetricDeltas {
  counters: [CounterName, Record<string, string> | undefined, number][]
  observations: [HistogramName, number][]
}

/** Worker side: accumulate, then take() the deltas to post. */
export class MetricsRecorder implements PipelineMetrics {
  private counters = new Map<string, [CounterName, Record<string, string> | undefined, number]>()
  private observations: [HistogramName, number][] = []

  inc(name: CounterName, labels?: Record<string, string>, by = 1): void {
    const key = `${name}|${labels ? JSON.stringify(labels) : ''}`
    const entry = this.counters.get(key)
    if (entry) entry[2] += by
    else this.counters.set(key, [name, labels, by])
  }

  observe(name: HistogramName, value: number): void {
    this.observations.push([name, value])
  }

  take(): MetricDeltas | null {
    if (this.counters.size === 0 && this.observations.length === 0) return null
    const deltas = { counters: [...this.counters.values()], observations: this.observations }
    this.counters = new Map()
    this.observations = []
    return deltas
  }
}

/** Capture-thread side: apply deltas to the registry. */
export function applyDeltas(metrics: Metrics, deltas: MetricDeltas): void {
  for (const [name, labels, by] of deltas.counters) {
    const counter = metrics[name] as { inc(labels: Record<string, string>, by: number): void; inc(by: number): void }
    if (labels) counter.inc(labels, by)
    else (counter.inc as (by: number) => void)(by)
  }
  for (const [name, value] of deltas.observations) metrics[name].observe(value)
}
