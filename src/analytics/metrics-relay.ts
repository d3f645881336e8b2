// Metrics recorded on an analytics thread reach the serving thread, which owns the Prometheus registry: the thread
// gets a stand-in with the registry's shape whose calls are recorded, and posted a few times a second.
import type { Metrics } from '../ops/metrics'

/** One call on a metric: its name in Metrics, the method, the labels (if any) and the value (if any). */
export type MetricCall = [name: string, method: 'inc' | 'set' | 'observe', labels: Record<string, string> | null, value: number | null]

const METHODS = new Set(['inc', 'set', 'observe'])
/** calls kept between two posts at most: a thread that cannot post drops the oldest rather than grow */
const MAX_PENDING_CALLS = 10_000

/** Thread side: a Metrics whose counters, gauges and histograms record their calls; take() hands them over. */
export class MetricsRecorder {
  private calls: MetricCall[] = []
  readonly metrics: Metrics

  constructor() {
    const record = (name: string, method: MetricCall[1], labels: Record<string, string> | null, value: number | null) => {
      if (this.calls.length >= MAX_PENDING_CALLS) this.calls.shift()
      this.calls.push([name, method, labels, value])
    }
    // inc(), inc(2), inc({a}), inc({a}, 2), observe(v), observe({a}, v), labels({a}).inc(…)
    const metric = (name: string, bound: Record<string, string> | null) => {
      const call = (method: MetricCall[1]) => (a?: unknown, b?: unknown) => {
        if (typeof a === 'object' && a !== null) record(name, method, { ...bound, ...(a as Record<string, string>) }, typeof b === 'number' ? b : null)
        else record(name, method, bound, typeof a === 'number' ? a : null)
      }
      return { inc: call('inc'), set: call('set'), observe: call('observe'), labels: (labels: Record<string, string>) => metric(name, { ...bound, ...labels }) }
    }
    const cache = new Map<string, unknown>()
    this.metrics = new Proxy({} as Metrics, {
      get: (_, name) => {
        if (typeof name !== 'string') return undefined
        // hooks the serving thread runs at scrape time are its own; a thread has none to add
        if (name === 'beforeScrape') return []
        let m = cache.get(name)
        if (!m) cache.set(name, (m = metric(name, null)))
        return m
      },
    })
  }

  take(): MetricCall[] | null {
    if (this.calls.length === 0) return null
    const calls = this.calls
    this.calls = []
    return calls
  }
}

/** Serving-thread side: the recorded calls applied to the registry (unknown names and methods ignored). */
export function applyMetricCalls(metrics: Metrics, calls: readonly MetricCall[]): void {
  for (const [name, method, labels, value] of calls) {
    const metric = (metrics as unknown as Record<string, Record<string, (...args: unknown[]) => void> | undefined>)[name]
    if (!metric || !METHODS.has(method) || typeof metric[method] !== 'function') continue
    const args: unknown[] = labels ? [labels] : []
    if (value !== null || method !== 'inc') args.push(value ?? 0)
    try {
      metric[method]!(...args)
    } catch {
      // labels the registry does not know: the serving thread's metrics stay whole
    }
  }
}
