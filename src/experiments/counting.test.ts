// The HogQL text of the results reads (hostile values stay inside their literals) and the join of exposures with
// metric events in TypeScript.
import { describe, expect, test } from 'bun:test'
import { parseQuery } from '../query/parser'
import { tokenize } from '../query/lexer'
import { str as hogqlString } from '../lib/hogql-text'
import { exposuresFrom, exposuresQuery, metricRowsQuery, MetricTally, type Exposure } from './counting'
import type { Metric } from './validation'

const HOSTILE = ["it's", 'back\\slash', "\\'; DROP TABLE events; --", "x' OR 1 = 1 OR 'a' = '", 'new\nline', "\\\\'", '\'\'\'', '$feature_flag`"', 'é 😀']

describe('the shared HogQL string literal (lib/hogql-text.ts)', () => {
  test('every hostile value is one string token whose value is the value itself', () => {
    for (const value of HOSTILE) {
      const tokens = tokenize(`SELECT ${hogqlString(value)}`, 1000)
      expect(tokens.filter((t) => t.kind !== 'eof').map((t) => t.kind)).toEqual(['ident', 'string'])
      expect(tokens[1]!.text).toBe(value)
    }
  })

  test('a hostile flag key, variant and property leave the query one SELECT with the same WHERE shape', () => {
    for (const value of HOSTILE) {
      const text = exposuresQuery({ flagKey: value, variants: ['control', value], from: Date.UTC(2024, 0, 1), to: Date.UTC(2024, 1, 1) }, 10, 0)
      expect(() => parseQuery(text)).not.toThrow()
      const metric: Metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: value, math: 'sum', math_property: value } }
      expect(() => parseQuery(metricRowsQuery(metric, { flagKey: 'k', variants: ['control', 'test'], from: 0, to: 1000 }, 10, 0))).not.toThrow()
    }
  })
})

const T0 = Date.UTC(2024, 4, 6)
const iso = (ms: number) => new Date(ms).toISOString()
const text = (ms: number) => iso(ms).slice(0, 19).replace('T', ' ')

describe('exposures and metric tallies', () => {
  const rows = [
    ['p1', iso(T0), 1, `${text(T0)}|control`],
    ['p2', iso(T0 + 1000), 2, `${text(T0 + 1000)}|test`],
    ['p3', iso(T0 + 2000), 1, `${text(T0 + 2000)}|te|st`],
  ]

  test('a person seen in two variants is left out, or kept at the first seen', () => {
    const excluded = exposuresFrom(rows, 'exclude')
    expect(excluded.excluded).toBe(1)
    expect([...excluded.exposures.keys()]).toEqual(['p1', 'p3'])
    expect(excluded.exposures.get('p3')).toEqual({ variant: 'te|st', at: T0 + 2000 })
    expect(exposuresFrom(rows, 'first_seen').exposures.get('p2')).toEqual({ variant: 'test', at: T0 + 1000 })
  })

  test('mean: events before the exposure or past the conversion window do not count', () => {
    const exposures = new Map<string, Exposure>([['a', { variant: 'control', at: T0 }], ['b', { variant: 'test', at: T0 }], ['c', { variant: 'test', at: T0 }]])
    const metric: Metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'buy', math: 'sum', math_property: 'price' }, conversion_window: 1, conversion_window_unit: 'hour' }
    const tally = new MetricTally(metric, exposures)
    tally.add([
      ['a', iso(T0 - 1), 'buy', 100], // before exposure
      ['a', iso(T0), 'buy', 5],
      ['b', iso(T0 + 3_599_000), 'buy', 7],
      ['b', iso(T0 + 3_601_000), 'buy', 1000], // past the window
      ['nobody', iso(T0), 'buy', 9],
      ['c', iso(T0), 'buy', 'not a number'],
    ])
    expect(tally.counts(['control', 'test'])).toEqual([
      { key: 'control', number_of_samples: 1, sum: 5, sum_squares: 25 },
      { key: 'test', number_of_samples: 2, sum: 7, sum_squares: 49 },
    ])
  })

  test('funnel: steps in order after the exposure; step counts per step', () => {
    const exposures = new Map<string, Exposure>([['a', { variant: 'control', at: T0 }], ['b', { variant: 'control', at: T0 }], ['c', { variant: 'test', at: T0 }]])
    const metric: Metric = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'view' }, { kind: 'EventsNode', event: 'buy' }] }
    const tally = new MetricTally(metric, exposures)
    tally.add([
      ['a', iso(T0 + 1), 'buy', 1], // buy before view: not step 2 yet
      ['a', iso(T0 + 2), 'view', 1],
      ['a', iso(T0 + 3), 'buy', 1],
      ['b', iso(T0 + 1), 'view', 1],
      ['c', iso(T0 - 1), 'view', 1], // before exposure
      ['c', iso(T0 + 1), 'buy', 1],
    ])
    expect(tally.counts(['control', 'test'])).toEqual([
      { key: 'control', number_of_samples: 2, sum: 1, sum_squares: 1, step_counts: [2, 1] },
      { key: 'test', number_of_samples: 1, sum: 0, sum_squares: 0, step_counts: [0, 0] },
    ])
  })
})
