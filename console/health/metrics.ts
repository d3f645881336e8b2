// Reading the Prometheus text of /metrics: the few series the Health page shows.

export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g

export function parseMetrics(text: string, wanted: (name: string) => boolean): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const m = LINE.exec(line)
    if (!m || !wanted(m[1])) continue
    const value = Number(m[4].replace(/^\+?Inf$/, 'Infinity'))
    if (Number.isNaN(value) && m[4] !== 'NaN') continue
    const labels: Record<string, string> = {}
    if (m[3]) for (const l of m[3].matchAll(LABEL)) labels[l[1]] = l[2]
    out.push({ name: m[1], labels, value })
  }
  return out
}

export function total(samples: Sample[], name: string): number {
  return samples.filter((s) => s.name === name).reduce((sum, s) => sum + (Number.isFinite(s.value) ? s.value : 0), 0)
}

export interface Snapshot {
  at: number
  received: number
  deadLetters: number
  backlog: number
  walBytes: number
  flushSeconds: number
  flushes: number
  stores: { name: string; up: boolean }[]
  lag: { consumer: string; records: number }[]
}

const NAMES = new Set([
  'capture_received_events_total',
  'pipeline_dead_lettered_events_total',
  'pipeline_backlog_records',
  'pipeline_wal_unflushed_bytes',
  'pipeline_flush_duration_seconds_sum',
  'pipeline_flush_duration_seconds_count',
  'store_up',
  'pipeline_consumer_lag_records',
])

export function snapshotOf(text: string, at: number): Snapshot {
  const samples = parseMetrics(text, (n) => NAMES.has(n))
  return {
    at,
    received: total(samples, 'capture_received_events_total'),
    deadLetters: total(samples, 'pipeline_dead_lettered_events_total'),
    backlog: total(samples, 'pipeline_backlog_records'),
    walBytes: total(samples, 'pipeline_wal_unflushed_bytes'),
    flushSeconds: total(samples, 'pipeline_flush_duration_seconds_sum'),
    flushes: total(samples, 'pipeline_flush_duration_seconds_count'),
    stores: samples.filter((s) => s.name === 'store_up').map((s) => ({ name: s.labels.store ?? 'store', up: s.value === 1 })),
    lag: samples.filter((s) => s.name === 'pipeline_consumer_lag_records').map((s) => ({ consumer: s.labels.consumer ?? Object.values(s.labels)[0] ?? 'consumer', records: s.value })),
  }
}
