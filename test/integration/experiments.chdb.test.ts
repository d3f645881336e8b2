// Experiment counting on the current ClickHouse engine (chDB 26.7, in-process): the exposure and metric reads of
// src/experiments/results.ts through the query service over a store filled through the event store and the person
// mapping sink (DateTime64 timestamps, the modern dialect), with the semantics the other stores are held to: the
// store's per-variant counts equal the per-person computation, past a cap a sample, never a refusal.
import { expect, test } from 'bun:test'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { sampleOf } from '../../src/experiments/counting'
import { countVariants } from '../../src/experiments/results'
import type { Metric } from '../../src/experiments/validation'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { event } from './event-store.contract'
import { perPersonCounts } from './experiments-per-person'

describeWithChdb('experiments on chDB (ClickHouse 26.7)', () => {
  test('exposures once per person, $multiple left out or first seen, merged persons once, metric events after exposure within the window', async () => {
    const url = chdbUrl(`experiments_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    const T0 = Date.UTC(2024, 4, 6, 12)
    const e = (name: string, distinctId: string, ms: number, properties: Record<string, unknown> = {}) =>
      event({ teamId: 1, event: name, distinctId, timestamp: T0 + ms, properties: JSON.stringify(properties) })
    const exposure = (distinctId: string, ms: number, variant: string, flag = 'exp-a') => e('$feature_flag_called', distinctId, ms, { $feature_flag: flag, $feature_flag_response: variant })
    await store.insertBatch(
      [
        exposure('p1', 0, 'control'),
        exposure('p1', 5000, 'control'),
        e('purchase', 'p1', 10_000, { price: 10 }),
        exposure('p2', 0, 'control'),
        exposure('p2', 1000, 'test'),
        e('purchase', 'p2', 10_000, { price: '1' }),
        e('purchase', 'p3', -60_000, { price: 100 }),
        exposure('p3', 0, 'test'),
        e('purchase', 'p3', 20_000, { price: 20 }),
        exposure('p4', 0, 'test'),
        e('purchase', 'p4', 7_200_000, { price: 1000 }),
        exposure('anon-5', 0, 'test'),
        exposure('user-5', 40_000, 'test'),
        e('purchase', 'user-5', 50_000, { price: 5.5 }),
        exposure('p6', 0, 'test', 'other-flag'),
        exposure('p7', 0, 'false'),
        // events that carry the flag as posthog-js sends it once /decide answered: p1 is exposed, p6 is not
        e('$pageview', 'p1', 1000, { '$feature/exp-a': 'control' }),
        e('$pageview', 'p6', 1000, { '$feature/exp-a': 'test' }),
        exposure('p8', 0, "it's \\' odd", "flag' OR 1=1 --"),
        event({ teamId: 2, event: '$feature_flag_called', distinctId: 'p1', timestamp: T0, properties: JSON.stringify({ $feature_flag: 'exp-a', $feature_flag_response: 'test' }) }),
      ],
      { inDoubt: false },
    )
    const person = (n: number) => `00000000-0000-4000-8000-00000000000${n}`
    await new ClickHouseMappingSink(chdbClient(), store.database).write([
      ...[1, 2, 3, 4, 6, 7, 8].map((n, i) => ({ teamId: 1, distinctId: `p${n}`, personId: person(n), version: i + 1 })),
      { teamId: 1, distinctId: 'anon-5', personId: person(5), version: 10 },
      { teamId: 1, distinctId: 'user-5', personId: person(5), version: 11 },
      { teamId: 2, distinctId: 'p1', personId: person(9), version: 12 },
    ])
    const query = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const window = { flagKey: 'exp-a', variants: ['control', 'test'], from: T0 - 3_600_000, to: T0 + 86_400_000 }
    const caps = { maxExposedPersons: 1000, maxMetricRows: 1000 }
    const purchases: Metric = { kind: 'ExperimentMetric', metric_type: 'mean', source: { kind: 'EventsNode', event: 'purchase' }, conversion_window: 1, conversion_window_unit: 'hour' }
    const counted = await countVariants(query, 1, window, purchases, 'exclude', caps)
    expect(counted).toMatchObject({ samplingRate: 1, sampledBy: [] })
    expect({ counts: counted.counts, excluded: counted.excluded }).toEqual({
      counts: [
        { key: 'control', number_of_samples: 1, sum: 1, sum_squares: 1 },
        { key: 'test', number_of_samples: 3, sum: 2, sum_squares: 2 },
      ],
      excluded: 1,
    })
    const revenue = await countVariants(query, 1, window, { ...purchases, source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'price' } }, 'first_seen', caps)
    expect(revenue.counts).toEqual([
      { key: 'control', number_of_samples: 2, sum: 11, sum_squares: 101 },
      { key: 'test', number_of_samples: 3, sum: 25.5, sum_squares: 430.25 },
    ])
    const funnel = await countVariants(query, 1, window, { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'purchase' }] }, 'exclude', caps)
    expect(funnel.counts.map((c) => c.step_counts)).toEqual([[1], [3]]) // no window: p4's late purchase counts
    // no exposures at all: empty answers, zero counts
    expect((await countVariants(query, 1, { ...window, flagKey: 'nobody' }, purchases, 'exclude', caps)).counts[0]).toEqual({ key: 'control', number_of_samples: 0, sum: 0, sum_squares: 0 })
    // hostile keys stay inside their literals: the flag and the variant are matched as they are
    const hostileWindow = { ...window, flagKey: "flag' OR 1=1 --", variants: ['control', "it's \\' odd"] }
    const hostile = await countVariants(query, 1, hostileWindow, purchases, 'exclude', caps)
    expect(hostile.counts.map((c) => c.number_of_samples)).toEqual([0, 1])
    // the same numbers as every exposed person read and joined one by one, for each metric and handling
    const metrics: Metric[] = [
      purchases,
      { ...purchases, conversion_window: null },
      { ...purchases, source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'price' } },
      { ...purchases, source: { kind: 'EventsNode', event: 'purchase', math: 'dau' } },
      { kind: 'ExperimentMetric', metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'purchase' }, { kind: 'EventsNode', event: 'purchase' }] },
    ]
    for (const metric of metrics) {
      for (const handling of ['exclude', 'first_seen'] as const) {
        const { counts, excluded } = await countVariants(query, 1, window, metric, handling, caps)
        expect({ counts, excluded }).toEqual(await perPersonCounts(query, 1, window, metric, handling))
      }
    }
    // past a cap: a sample of persons (never a refusal), exactly the per-person computation over the same persons
    const sampled = await countVariants(query, 1, window, purchases, 'first_seen', { maxExposedPersons: 2, maxMetricRows: 1000 })
    expect(sampled.sampledBy).toEqual(['exposed_persons'])
    expect(sampled.samplingRate).toBeCloseTo(2 / 5, 6) // p1, p2, p3, p4 and person 5 did a purchase
    const reference = await perPersonCounts(query, 1, window, purchases, 'first_seen', sampleOf(sampled.samplingRate))
    expect({ counts: sampled.counts, excluded: sampled.excluded }).toEqual(reference)
    // the check of exposures: 5 persons exposed to exp-a (p1 to p4 and person 5; p7's 'false' is none), p1 seen with it elsewhere
    expect(counted.evidence).toEqual({ exposed: 5, seen: 1 })
    expect(hostile.evidence).toBeNull()
    await store.close()
  })
})
