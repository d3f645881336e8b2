import { describe, expect, test } from 'bun:test'
import { countPerson, emptyCounts, retentionPeriods, retentionRows } from './retention-table'
import { isoLocal } from '../lib/timezone'

const NOW = Date.UTC(2024, 2, 13, 15, 30) // Wednesday 13 March 2024, 15:30 UTC
const utc = { timezone: 'UTC', weekStartDay: 0 }

describe('retentionPeriods', () => {
  test('no date_from: the last totalIntervals periods up to the one holding date_to', () => {
    // today's range as resolved for a day interval: [00:00 of 6 March, 00:00 of 14 March)
    const resolved = { from: Date.UTC(2024, 2, 6), to: Date.UTC(2024, 2, 14) }
    const days = retentionPeriods(resolved, { interval: 'day', totalIntervals: 3, hasDateFrom: false, ...utc })
    expect(days.map((d) => d.day)).toEqual(['2024-03-11', '2024-03-12', '2024-03-13'])
    const weeks = retentionPeriods(resolved, { interval: 'week', totalIntervals: 2, hasDateFrom: false, ...utc })
    expect(weeks.map((d) => d.day)).toEqual(['2024-03-03', '2024-03-10'])
    const mondayWeeks = retentionPeriods(resolved, { interval: 'week', totalIntervals: 2, hasDateFrom: false, timezone: 'UTC', weekStartDay: 1 })
    expect(mondayWeeks.map((d) => d.day)).toEqual(['2024-03-04', '2024-03-11'])
    const months = retentionPeriods(resolved, { interval: 'month', totalIntervals: 3, hasDateFrom: false, ...utc })
    expect(months.map((d) => d.day)).toEqual(['2024-01-01', '2024-02-01', '2024-03-01'])
    expect(months[2].end).toBe(Date.UTC(2024, 3, 1))
    const hours = retentionPeriods({ from: NOW - 3_600_000, to: Date.UTC(2024, 2, 13, 16) }, { interval: 'hour', totalIntervals: 2, hasDateFrom: false, ...utc })
    expect(hours.map((d) => d.day)).toEqual(['2024-03-13 14:00:00', '2024-03-13 15:00:00'])
  })

  test('a date_from: from the start of its period, whatever totalIntervals says', () => {
    const resolved = { from: Date.UTC(2024, 1, 20), to: Date.UTC(2024, 2, 14) }
    const weeks = retentionPeriods(resolved, { interval: 'week', totalIntervals: 2, hasDateFrom: true, ...utc })
    expect(weeks.map((d) => d.day)).toEqual(['2024-02-18', '2024-02-25', '2024-03-03', '2024-03-10'])
  })

  test('local days across the spring clock change in New York (a 23-hour day)', () => {
    const zone = 'America/New_York'
    // 8-14 March 2024 local; clocks went forward on 10 March
    const resolved = { from: Date.UTC(2024, 2, 8, 5), to: Date.UTC(2024, 2, 14, 4) }
    const days = retentionPeriods(resolved, { interval: 'day', totalIntervals: 4, hasDateFrom: false, timezone: zone, weekStartDay: 0 })
    expect(days.map((d) => d.day)).toEqual(['2024-03-10', '2024-03-11', '2024-03-12', '2024-03-13'])
    expect(days[0].end - days[0].start).toBe(23 * 3_600_000)
    expect(days.map((d) => isoLocal(zone, d.start))).toEqual(['2024-03-10T00:00:00-05:00', '2024-03-11T00:00:00-04:00', '2024-03-12T00:00:00-04:00', '2024-03-13T00:00:00-04:00'])
  })

  test('too many periods: refused before anything is read', () => {
    expect(() => retentionPeriods({ from: Date.UTC(2020, 0, 1), to: Date.UTC(2024, 0, 1) }, { interval: 'hour', totalIntervals: 8, hasDateFrom: true, ...utc })).toThrow(/more than 1,000/)
  })
})

describe('countPerson', () => {
  test('recurring: a cohort for every period with the target event, returns counted after it', () => {
    const counts = emptyCounts(4, 4)
    countPerson(counts, { targets: [0, 2], returns: new Set([1, 2, 3]) }, false)
    countPerson(counts, { targets: [1], returns: new Set([1]) }, false)
    // returns only: no cohort
    countPerson(counts, { targets: [], returns: new Set([0, 1, 2, 3]) }, false)
    expect(counts).toEqual([
      [1, 1, 1, 1],
      [1, 0, 0, 0],
      [1, 1, 0, 0],
      [0, 0, 0, 0],
    ])
  })

  test('first time: only the first target period, none when the first event ever is before the range', () => {
    const counts = emptyCounts(3, 3)
    countPerson(counts, { targets: [2, 1], returns: new Set([2]) }, true)
    countPerson(counts, { targets: [0], returns: new Set([1, 2]), firstTargetBeforeRange: true }, true)
    expect(counts).toEqual([
      [0, 0, 0],
      [1, 1, 0],
      [0, 0, 0],
    ])
  })

  test('a return in the cohort period itself is not a return; periods past the table are ignored', () => {
    const counts = emptyCounts(2, 5)
    countPerson(counts, { targets: [0, 7, -1], returns: new Set([0, 5]) }, false)
    expect(counts).toEqual([
      [1, 0, 0, 0, 0],
      [0, 0, 0, 0, 0],
    ])
  })
})

test('retentionRows: PostHog’s cohort table', () => {
  const rows = retentionRows([[2, 1], [1, 0]], 'Week', ['2024-03-03T00:00:00Z', '2024-03-10T00:00:00Z'])
  expect(rows).toEqual([
    { values: [{ count: 2, label: 'Week 0' }, { count: 1, label: 'Week 1' }], label: 'Week 0', date: '2024-03-03T00:00:00Z' },
    { values: [{ count: 1, label: 'Week 0' }, { count: 0, label: 'Week 1' }], label: 'Week 1', date: '2024-03-10T00:00:00Z' },
  ])
})
