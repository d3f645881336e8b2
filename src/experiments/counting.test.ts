// The HogQL text of the results reads (hostile values stay inside their literals, every read compiles for every
// store), the sample by person id, and the join of exposures with metric events in TypeScript.
import { describe, expect, test } from 'bun:test'
import { parseQuery } from '../query/parser'
import { tokenize } from '../query/lexer'
import { str as hogqlString } from '../lib/hogql-text'
import { compileQuery } from '../query/compile'
import type { DialectName } from '../query/dialect'
import {
  canCheckExposures, exposedPerVariantQuery, exposuresFrom, joinedExposuresQuery, metricEvents, metricRowsQuery, MetricTally, overviewQuery, SAMPLE_SPACE, sampleOf, sampleRate,
  type Exposure, type Window,
} from './counting'
import { isFlood, resultWarnings, type VariantTally } from './results'
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

  test('a hostile flag key, variant and property leave every read one SELECT that compiles for every store', () => {
    const dialects: DialectName[] = ['sqlite', 'duckdb', 'clickhouse-legacy', 'clickhouse-modern']
    for (const value of HOSTILE) {
      const window: Window = { flagKey: value, variants: ['control', value], from: Date.UTC(2024, 0, 1), to: Date.UTC(2024, 1, 1) }
      const metric: Metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: value, math: 'sum', math_property: value.replace(/["\\\n]/g, '') } }
      const funnel: Metric = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: value }, { kind: 'EventsNode', event: 'b' }] }
      const actionFunnel: Metric = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'ActionsNode', id: 7 }, { kind: 'EventsNode', event: 'b' }] }
      for (const sample of [null, sampleOf(0.25)]) {
        const texts = [
          exposedPerVariantQuery(window, sample),
          overviewQuery(metricEvents(metric), window),
          overviewQuery(metricEvents(funnel), { ...window, flagKey: 'new-checkout_2' }), // with the check of exposures
          joinedExposuresQuery(metricEvents(metric), window, sample, 10, 0),
          joinedExposuresQuery(metricEvents(funnel), window, sample, 10, 0),
          metricRowsQuery(metric, metricEvents(metric), window, sample, 10, 0),
          metricRowsQuery(funnel, metricEvents(funnel), window, sample, 10, 0),
          // an action's condition: no prefilter by name
          overviewQuery(metricEvents(actionFunnel, new Map([[7, `event = ${hogqlString(value)}`]])), { ...window, flagKey: 'new-checkout_2' }),
        ]
        for (const text of texts) {
          const parsed = parseQuery(text)
          for (const dialect of dialects) expect(() => compileQuery(parsed, { dialect, teamId: 1, database: 'db', now: 0 })).not.toThrow()
        }
      }
      // the check of exposures names the flag as a property: only for keys a flag may have
      expect(canCheckExposures(window)).toBe(false)
      expect(overviewQuery(metricEvents(metric), window)).not.toContain('$feature/')
    }
    expect(canCheckExposures({ flagKey: 'new-checkout_2', variants: ['control', 'test'], from: 0, to: 1000 })).toBe(true)
  })
})

describe('the sample by person id', () => {
  test('a rate of 1 or more is every person; below it a threshold on the id\'s last 8 hex digits, at that rate', () => {
    expect(sampleOf(1)).toBeNull()
    expect(sampleOf(3)).toBeNull()
    expect(sampleRate(null)).toBe(1)
    expect(sampleOf(0.5)).toEqual({ threshold: SAMPLE_SPACE / 2 })
    expect(sampleRate(sampleOf(0.001))).toBeCloseTo(0.001, 9)
    expect(sampleOf(1e-12)!.threshold).toBe(1) // never an empty sample
    const text = joinedExposuresQuery(metricEvents({ kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'a' }] }), { flagKey: 'k', variants: ['control', 'test'], from: 0, to: 1000 }, sampleOf(0.5), 10, 0)
    expect(text).toContain("substring(toString(person_id), 29, 8) < '80000000'")
  })

  test('the digits compared are uniform over UUIDv5 person ids: a 10 % threshold keeps about 10 % of 20,000', async () => {
    const { personUuid } = await import('../people/identity')
    const threshold = sampleOf(0.1)!.threshold.toString(16).padStart(8, '0')
    let kept = 0
    for (let i = 0; i < 20_000; i++) if (personUuid(1, `visitor-${i}`).slice(28, 36) < threshold) kept++
    expect(kept).toBeGreaterThan(1800)
    expect(kept).toBeLessThan(2200)
  })
})

describe('the notes of an answer', () => {
  const window: Window = { flagKey: 'exp', variants: ['control', 'test'], from: 0, to: 1000 }
  const tally = (rate: number, evidence: VariantTally['evidence'] = null): VariantTally => ({
    counts: [], excluded: 0, samplingRate: rate, sampledBy: rate < 1 ? ['exposed_persons'] : [], joined: { persons: 10, metricEvents: 20 }, evidence,
  })

  test('a flood: more exposed persons without a trace of the flag elsewhere than with one, at least 100 of them', () => {
    expect(isFlood({ exposed: 205_000, seen: 400 })).toBe(true)
    expect(isFlood({ exposed: 240, seen: 0 })).toBe(true)
    expect(isFlood({ exposed: 99, seen: 0 })).toBe(false) // too few to call
    expect(isFlood({ exposed: 1000, seen: 600 })).toBe(false) // most were answered
    expect(isFlood(null)).toBe(false)
  })

  test('warnings: the sample with its rate, the flood with its numbers', () => {
    expect(resultWarnings(window, tally(1, { exposed: 10, seen: 10 }))).toEqual([])
    const sampled = resultWarnings(window, tally(0.25))
    expect(sampled).toMatchObject([{ type: 'sampled', sampling_rate: 0.25, limits: ['exposed_persons'] }])
    const flooded = resultWarnings(window, tally(1, { exposed: 205_400, seen: 400 }))
    expect(flooded).toMatchObject([{ type: 'exposures_unexplained', exposed_persons: 205_400, persons_seen_with_flag: 400 }])
    expect(flooded[0]!.message).toContain('205000 of 205400')
    expect(resultWarnings(window, tally(0.5, { exposed: 205_400, seen: 400 })).map((w) => w.type)).toEqual(['sampled', 'exposures_unexplained'])
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

  test('funnel of actions: an event that is two steps (both actions match it) reaches one of them at a time', () => {
    const exposures = new Map<string, Exposure>([['a', { variant: 'control', at: T0 }], ['b', { variant: 'test', at: T0 }]])
    const metric: Metric = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'ActionsNode', id: 1 }, { kind: 'ActionsNode', id: 2 }] }
    const tally = new MetricTally(metric, exposures)
    tally.add([
      ['a', iso(T0 + 1), 3, 1], // both steps: the first
      ['a', iso(T0 + 2), 3, 1], // both steps: the second
      ['b', iso(T0 + 1), 3, 1],
      ['b', iso(T0 + 2), 0, 1], // neither
    ])
    expect(tally.counts(['control', 'test'])).toEqual([
      { key: 'control', number_of_samples: 1, sum: 1, sum_squares: 1, step_counts: [1, 1] },
      { key: 'test', number_of_samples: 1, sum: 0, sum_squares: 0, step_counts: [1, 0] },
    ])
    expect(metricEvents(metric, new Map([[1, "event = 'a'"], [2, 'properties.x = 1']]))).toEqual({ conditions: ["event = 'a'", 'properties.x = 1'], names: null })
    expect(() => metricEvents(metric)).toThrow(/not resolved/)
  })

  test('funnel: steps in order after the exposure; step counts per step', () => {
    const exposures = new Map<string, Exposure>([['a', { variant: 'control', at: T0 }], ['b', { variant: 'control', at: T0 }], ['c', { variant: 'test', at: T0 }]])
    const metric: Metric = { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'view' }, { kind: 'EventsNode', event: 'buy' }] }
    const tally = new MetricTally(metric, exposures)
    // the third column: the steps an event is, a bit each (view 1, buy 2)
    tally.add([
      ['a', iso(T0 + 1), 2, 1], // buy before view: not step 2 yet
      ['a', iso(T0 + 2), 1, 1],
      ['a', iso(T0 + 3), 2, 1],
      ['b', iso(T0 + 1), 1, 1],
      ['c', iso(T0 - 1), 1, 1], // before exposure
      ['c', iso(T0 + 1), 2, 1],
    ])
    expect(tally.counts(['control', 'test'])).toEqual([
      { key: 'control', number_of_samples: 2, sum: 1, sum_squares: 1, step_counts: [2, 1] },
      { key: 'test', number_of_samples: 1, sum: 0, sum_squares: 0, step_counts: [0, 0] },
    ])
  })
})
