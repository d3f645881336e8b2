import { expect, test } from 'bun:test'
import { overviewFigures, roundText, secondsText, statsRows } from './web-data'

test('the five figures, their units and their change from the previous period', () => {
  const figures = overviewFigures([
    { key: 'visitors', kind: 'unit', value: 412, previous: 380, changeFromPreviousPct: 8, isIncreaseBad: null },
    { key: 'views', kind: 'unit', value: 900, previous: null, changeFromPreviousPct: null },
    { key: 'sessions', kind: 'unit', value: 500, previous: 0, changeFromPreviousPct: null },
    { key: 'session duration', kind: 'duration_s', value: 185.4, previous: 100, changeFromPreviousPct: 85 },
    { key: 'bounce rate', kind: 'percentage', value: 41.25, previous: 30, changeFromPreviousPct: 38, isIncreaseBad: true },
  ])
  expect(figures.map((f) => [f.name, f.value])).toEqual([
    ['Visitors', '412'],
    ['Views', '900'],
    ['Sessions', '500'],
    ['Session duration', '3m 05s'],
    ['Bounce rate', '41.3%'],
  ])
  expect(figures[0]).toMatchObject({ change: '+8% from the previous period', good: true })
  expect(figures[1].change).toBeNull()
  expect(figures[2].change).toBe('previously 0')
  expect(figures[4]).toMatchObject({ change: '+38% from the previous period', good: false })
})

test('numbers without float noise, durations in minutes', () => {
  expect(roundText(383.93999999999994)).toBe('383.94')
  expect(roundText(12)).toBe('12')
  expect(secondsText(9.6)).toBe('10s')
  expect(secondsText(3725)).toBe('1h 02m')
})

test("a stats table's rows read by column name, the current value of each pair", () => {
  const rows = statsRows({
    columns: ['context.columns.breakdown_value', 'context.columns.visitors', 'context.columns.views', 'context.columns.bounce_rate', 'context.columns.ui_fill_fraction'],
    results: [
      ['/pricing', [120, 100], [300, null], [38.2, null], 0.29],
      [null, [3, null], [4, null], [null, null], 0.01],
    ],
  })
  expect(rows).toEqual([
    { value: '/pricing', visitors: 120, views: 300, bounceRate: 38.2 },
    { value: '(none)', visitors: 3, views: 4, bounceRate: null },
  ])
  expect(statsRows(null)).toEqual([])
})
