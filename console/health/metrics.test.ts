import { describe, expect, test } from 'bun:test'
import { parseMetrics, snapshotOf } from './metrics'

const TEXT = `# HELP store_up 1 when the store answers
# TYPE store_up gauge
store_up{store="postgres"} 1
store_up{store="clickhouse"} 0
capture_received_events_total{endpoint="capture"} 10
capture_received_events_total{endpoint="batch"} 32
pipeline_backlog_records 7
pipeline_consumer_lag_records{consumer="store"} 5
pipeline_consumer_lag_records{consumer="learn"} 0
pipeline_dead_lettered_events_total{reason="rejected_by_store"} 3
pipeline_flush_duration_seconds_sum 1.5
pipeline_flush_duration_seconds_count 6
weird_metric{label="with \\"quotes\\", and commas"} 1
`

describe('Health: reading /metrics', () => {
  test('the series the page shows, summed over their labels', () => {
    const s = snapshotOf(TEXT, 1000)
    expect(s.stores).toEqual([
      { name: 'postgres', up: true },
      { name: 'clickhouse', up: false },
    ])
    expect(s.received).toBe(42)
    expect(s.backlog).toBe(7)
    expect(s.deadLetters).toBe(3)
    expect(s.lag).toEqual([
      { consumer: 'store', records: 5 },
      { consumer: 'learn', records: 0 },
    ])
    expect(s.flushSeconds / s.flushes).toBe(0.25)
  })

  test('labels with quotes and commas are read whole; comments and unknown lines are skipped', () => {
    const [sample] = parseMetrics(TEXT, (n) => n === 'weird_metric')
    expect(sample.labels.label).toBe('with \\"quotes\\", and commas')
    expect(parseMetrics('garbage line\n#comment\n', () => true)).toEqual([])
  })
})
