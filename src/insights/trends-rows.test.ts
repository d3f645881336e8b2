import { expect, test } from 'bun:test'
import { buckets } from './buckets'
import { activePersons, MAX_MATH_ROWS, quantile } from './trends-rows'
import type { InsightContext } from './service'
import { DAY_MS } from '../lib/timezone'

test('quantile: exact, interpolated linearly between the nearest values; 0 for no values', () => {
  expect(quantile([], 0.5)).toBe(0)
  expect(quantile([7], 0.99)).toBe(7)
  expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5)
  expect(quantile([3, 5], 0.9)).toBeCloseTo(4.8)
  expect(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.95)).toBeCloseTo(9.55)
})

/** A context whose only query answers these (person, day) rows. */
function contextOf(rows: unknown[][]): InsightContext {
  return { project: { id: 1, timezone: 'UTC', weekStartDay: 0 }, now: 0, hogql: async () => ({ results: rows, columns: ['person_id', 'day'], hasMore: false }) } as unknown as InsightContext
}

const dayText = (ms: number) => new Date(ms).toISOString()

test('active persons: each bucket counts the distinct persons of its trailing window, gaps and edges included', async () => {
  const from = Date.UTC(2024, 0, 10)
  const range = { from, to: from + 5 * DAY_MS, date_from: '', date_to: '' }
  // p1 on Jan 3 (before the window of Jan 10, Jan 4…10), p2 Jan 4 and 11, p3 Jan 12 and 14
  const rows = [['p1', dayText(Date.UTC(2024, 0, 3))], ['p2', dayText(Date.UTC(2024, 0, 4))], ['p3', dayText(Date.UTC(2024, 0, 12))], ['p3', dayText(Date.UTC(2024, 0, 14))], ['p2', dayText(Date.UTC(2024, 0, 11))]]
  const days = buckets(range, 'day', { timezone: 'UTC' })
  expect(await activePersons(contextOf(rows), () => 'true', range, days, 7, 'attr')).toEqual([1, 1, 2, 2, 2])
  // hour buckets: the window of the day each hour falls in
  const hours = buckets({ ...range, to: from + DAY_MS + 2 * 3_600_000 }, 'hour', { timezone: 'UTC' })
  const byHour = await activePersons(contextOf(rows), () => 'true', range, hours, 7, 'attr')
  expect(byHour).toEqual([...new Array(24).fill(1), 1, 1])
  // one number over the range: the window ending with its last day
  expect(await activePersons(contextOf(rows), () => 'true', range, [], 30, 'attr')).toEqual([3])
})

test('active persons over 10,000 hour buckets of a month window: linear in the rows, not buckets × window × persons', async () => {
  // the most rows the math reads, all on one day 30 days before the range's end: in the window of 720 hour buckets
  const from = Date.UTC(2023, 0, 1)
  const range = { from, to: from + 416 * DAY_MS, date_from: '', date_to: '' }
  const busyDay = range.to - 30 * DAY_MS
  const rows = Array.from({ length: MAX_MATH_ROWS - 1 }, (_, p) => [`person-${p}`, dayText(busyDay)])
  const list = buckets(range, 'hour', { timezone: 'UTC' })
  const started = performance.now()
  const data = await activePersons(contextOf(rows), () => 'true', range, list, 30, 'attr')
  const ms = performance.now() - started
  console.log(`${rows.length} person-days, ${list.length} hour buckets, 30-day window: ${ms.toFixed(0)} ms`)
  expect(data).toHaveLength(list.length)
  expect(data.filter((n) => n === rows.length)).toHaveLength(30 * 24)
  expect(data.filter((n) => n === 0)).toHaveLength(list.length - 30 * 24)
  // generous: the old way took seconds of one thread here
  expect(ms).toBeLessThan(2_000)
})

test('active persons: the sliding window agrees with counting each window afresh (weeks, months, sparse days)', async () => {
  const from = Date.UTC(2024, 0, 1)
  const range = { from, to: from + 200 * DAY_MS, date_from: '', date_to: '' }
  let seed = 7
  const random = () => ((seed = (seed * 16807) % 2147483647) / 2147483647)
  const rows = Array.from({ length: 400 }, () => [`p${Math.floor(random() * 30)}`, dayText(from - 40 * DAY_MS + Math.floor(random() * 240) * DAY_MS)])
  for (const interval of ['day', 'week', 'month'] as const) {
    for (const windowDays of [7, 30]) {
      const list = buckets(range, interval, { timezone: 'UTC' })
      const expected = list.map((bucket) => {
        const last = Math.floor(bucket.wallStart / DAY_MS) * DAY_MS
        return new Set(rows.filter(([, day]) => { const t = Date.parse(String(day)); return t <= last && t > last - windowDays * DAY_MS }).map(([p]) => p)).size
      })
      expect(await activePersons(contextOf(rows), () => 'true', range, list, windowDays, 'attr')).toEqual(expected)
    }
  }
})
