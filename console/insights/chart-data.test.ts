import { describe, expect, test } from 'bun:test'
import { breakdownText, durationText, funnelGroups, funnelSteps, lifecycleBars, lifecycleLines, linePath, linearScale, percent, retentionGrid, roundTo, total, trendLines } from './chart-data'

describe('trend lines from a TrendsQuery answer', () => {
  test('one line per result, with its labels; breakdown values and periods named for people', () => {
    const lines = trendLines([
      { label: '$pageview', data: [1, 2, 3], labels: ['1-Jan-2024', '2-Jan-2024', '3-Jan-2024'], count: 6 },
      { label: '$$_posthog_breakdown_null_$$', breakdown_value: '$$_posthog_breakdown_null_$$', data: [0, 1, 0], labels: [] },
      { label: 'Chrome', breakdown_value: 'Chrome', data: [4, 5, 6], labels: [], compare: true, compare_label: 'previous' },
    ])
    expect(lines.map((l) => l.label)).toEqual(['$pageview', '(none)', 'Chrome (previous)'])
    expect(lines[0].values).toEqual([1, 2, 3])
    expect(lines[0].labels).toEqual(['1-Jan-2024', '2-Jan-2024', '3-Jan-2024'])
    expect(lines.map((l) => l.previous)).toEqual([false, false, true])
  })

  test('results that are not series are left out; anything else is no lines', () => {
    expect(trendLines([{ label: 'x', aggregated_value: 3 }])).toEqual([])
    expect(trendLines(null)).toEqual([])
    expect(breakdownText('$$_posthog_breakdown_other_$$')).toBe('Other')
    expect(breakdownText(12)).toBe('12')
  })
})

describe('funnel steps', () => {
  test('percentages of the first and the previous step', () => {
    const steps = funnelSteps([
      { name: 'signup', count: 200, median_conversion_time: null },
      { name: 'purchase', count: 50, median_conversion_time: 3600 },
      { name: 'repeat', count: 0, median_conversion_time: null },
    ])
    expect(steps.map((s) => [s.name, s.count, s.percentOfFirst, s.percentOfPrevious])).toEqual([
      ['signup', 200, 100, 100],
      ['purchase', 50, 25, 25],
      ['repeat', 0, 0, 0],
    ])
    expect(steps[1].medianSeconds).toBe(3600)
  })

  test('a broken-down funnel is summed over its values', () => {
    const steps = funnelSteps([
      [{ name: 'a', count: 3 }, { name: 'b', count: 1 }],
      [{ name: 'a', count: 1 }, { name: 'b', count: 1 }],
    ])
    expect(steps.map((s) => s.count)).toEqual([4, 2])
    expect(steps[1].percentOfFirst).toBe(50)
  })
})

describe('scales and paths', () => {
  test('a value axis maps 0 to the bottom and the top tick to the top', () => {
    const y = linearScale(100, 180, 10)
    expect(y(0)).toBe(180)
    expect(y(100)).toBe(10)
    expect(y(50)).toBe(95)
    expect(linearScale(0, 180, 10)(0)).toBe(180)
  })

  test('a line spreads its points across the width', () => {
    const y = linearScale(10, 100, 0)
    expect(linePath([0, 10], 40, 600, y)).toBe('M40,100 L640,0')
    expect(linePath([5], 40, 600, y)).toBe('M340,50')
    expect(linePath([], 40, 600, y)).toBe('')
  })

  test('percentages and durations as text', () => {
    expect(percent(1, 3)).toBe(33.3)
    expect(percent(1, 0)).toBe(0)
    expect(durationText(null)).toBe('—')
    expect(durationText(42)).toBe('42s')
    expect(durationText(600)).toBe('10m')
    expect(durationText(5400)).toBe('1.5h')
    expect(durationText(172800)).toBe('2d')
  })
})

describe('retention grid', () => {
  test('one row per cohort, each period as a count and a share of the cohort', () => {
    const grid = retentionGrid([
      { date: '2024-01-01T00:00:00Z', label: 'Day 0', values: [{ count: 4, label: 'Day 0' }, { count: 1, label: 'Day 1' }] },
      { date: '2024-01-02T00:00:00Z', label: 'Day 1', values: [{ count: 0, label: 'Day 0' }] },
    ])
    expect(grid.periods).toEqual(['Day 0', 'Day 1'])
    expect(grid.rows).toEqual([
      { cohort: '2024-01-01', size: 4, values: [{ count: 4, percent: 100 }, { count: 1, percent: 25 }] },
      { cohort: '2024-01-02', size: 0, values: [{ count: 0, percent: 0 }] },
    ])
    expect(retentionGrid(undefined)).toEqual({ periods: [], rows: [] })
  })
})

describe('round three: sums, lifecycle, funnels per value, retention blanks', () => {
  test("a property's sum is rounded and named by its property", () => {
    const [line] = trendLines([{ label: 'purchased', data: [100.1, 283.84000000000003], labels: ['a', 'b'], action: { math: 'sum', math_property: 'revenue' } }])
    expect(line.label).toBe('Sum of revenue')
    expect(line.values).toEqual([100.1, 283.84])
    expect(total([100.1, 200.2, 83.64])).toBe(383.94)
    expect(roundTo(383.93999999999994)).toBe(383.94)
    // broken down, the value names the line
    expect(trendLines([{ label: 'pro', breakdown_value: 'pro', data: [1], action: { math: 'sum', math_property: 'revenue' } }])[0].label).toBe('pro')
  })

  test('lifecycle lines are named by status, dormant kept negative', () => {
    const lines = lifecycleLines([
      { label: '$pageview - new', status: 'new', data: [2, 0], labels: ['x', 'y'] },
      { label: '$pageview - dormant', status: 'dormant', data: [0, -2], labels: ['x', 'y'] },
    ])
    expect(lines.map((l) => [l.label, l.values])).toEqual([
      ['New', [2, 0]],
      ['Dormant', [0, -2]],
    ])
  })

  test('a broken-down funnel is one funnel per value, each with its own shares and times', () => {
    const groups = funnelGroups([
      [
        { name: 'signup', count: 299, breakdown_value: 'pro', median_conversion_time: null },
        { name: 'purchase', count: 182, breakdown_value: 'pro', median_conversion_time: 60 },
      ],
      [
        { name: 'signup', count: 6, breakdown_value: '$$_posthog_breakdown_null_$$', median_conversion_time: null },
        { name: 'purchase', count: 5, breakdown_value: '$$_posthog_breakdown_null_$$', median_conversion_time: 30 },
      ],
    ])
    expect(groups.map((g) => g.value)).toEqual(['pro', '(none)'])
    expect(groups[0].steps.map((s) => [s.count, s.percentOfFirst, s.medianSeconds])).toEqual([
      [299, 100, null],
      [182, 60.9, 60],
    ])
    expect(groups[1].steps[1].percentOfPrevious).toBe(83.3)
    expect(funnelGroups([{ name: 'a', count: 3 }])[0].value).toBeNull()
  })

  test('retention periods after the current one are blank, not 0 %', () => {
    const values = (counts: number[]) => counts.map((count, k) => ({ count, label: `Week ${k}` }))
    const grid = retentionGrid([
      { date: '2024-01-01T00:00:00Z', values: values([4, 2, 1]) },
      { date: '2024-01-08T00:00:00Z', values: values([3, 1, 0]) },
      { date: '2024-01-15T00:00:00Z', values: values([5, 0, 0]) },
    ])
    expect(grid.rows.map((r) => r.values.map((v) => (v === null ? null : v.count)))).toEqual([
      [4, 2, 1],
      [3, 1, null],
      [5, null, null],
    ])
    expect(grid.rows.map((r) => r.size)).toEqual([4, 3, 5])
  })
})

describe('lifecycle as stacked bars', () => {
  test('new, returning, resurrecting stack above the axis in that order; dormant below', () => {
    const answer = [
      { status: 'dormant', data: [0, -2], labels: ['1-Jan', '2-Jan'], label: '$pageview - dormant' },
      { status: 'new', data: [3, 1], labels: ['1-Jan', '2-Jan'], label: '$pageview - new' },
      { status: 'resurrecting', data: [0, 1], labels: ['1-Jan', '2-Jan'], label: '$pageview - resurrecting' },
      { status: 'returning', data: [0, 2], labels: ['1-Jan', '2-Jan'], label: '$pageview - returning' },
    ]
    const { labels, bars, min, max } = lifecycleBars(lifecycleLines(answer))
    expect(labels).toEqual(['1-Jan', '2-Jan'])
    expect(bars[1]).toEqual([
      { status: 'New', value: 1, from: 0, to: 1 },
      { status: 'Returning', value: 2, from: 1, to: 3 },
      { status: 'Resurrecting', value: 1, from: 3, to: 4 },
      { status: 'Dormant', value: -2, from: 0, to: -2 },
    ])
    expect([min, max]).toEqual([-2, 4])
    expect(lifecycleBars([]).bars).toEqual([])
  })
})
