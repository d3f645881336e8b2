// Buckets of a range in the project's timezone: every one present, PostHog's days and labels, clock changes,
// weeks starting Sunday or Monday, and the bound on their number.
import { describe, expect, test } from 'bun:test'
import { ApiError } from '../http/errors'
import { bucketIndexAt, bucketIndexOfWall, buckets, MAX_BUCKETS, type Bucket } from './buckets'
import { resolveDateRange, type Interval } from './date-range'
import { HOUR_MS, offsetTransitions, wallStartOfDay, wallStartOfMonth, wallStartOfWeek } from '../lib/timezone'

const utc = (iso: string) => Date.parse(iso)
const NOW = utc('2026-01-01T00:00:00Z')

function of(from: string, to: string, interval: Interval, timezone: string, weekStartDay = 0): Bucket[] {
  const range = resolveDateRange({ date_from: from, date_to: to }, { now: NOW, timezone, interval, weekStartDay })
  return buckets(range, interval, { timezone, weekStartDay })
}
const summary = (list: Bucket[]) => list.map((b) => [b.day, b.label, (b.end - b.start) / HOUR_MS])

describe('buckets', () => {
  test('days: every day present, a leap day, labels 1-Jan-2024', () => {
    expect(summary(of('2024-02-27', '2024-03-02', 'day', 'UTC'))).toEqual([
      ['2024-02-27', '27-Feb-2024', 24],
      ['2024-02-28', '28-Feb-2024', 24],
      ['2024-02-29', '29-Feb-2024', 24],
      ['2024-03-01', '1-Mar-2024', 24],
      ['2024-03-02', '2-Mar-2024', 24],
    ])
  })

  test('days over clock changes are 23 and 25 hours; Samoa has no 30 December 2011', () => {
    expect(summary(of('2024-03-09', '2024-03-11', 'day', 'America/New_York')).map((b) => b[2])).toEqual([24, 23, 24])
    expect(summary(of('2024-11-02', '2024-11-04', 'day', 'America/New_York')).map((b) => b[2])).toEqual([24, 25, 24])
    expect(summary(of('2024-10-26', '2024-10-28', 'day', 'Europe/London')).map((b) => b[2])).toEqual([24, 25, 24])
    expect(summary(of('2011-12-29', '2011-12-31', 'day', 'Pacific/Apia'))).toEqual([
      ['2011-12-29', '29-Dec-2011', 24],
      ['2011-12-31', '31-Dec-2011', 24],
    ])
  })

  test('hours: labels 1-Jan 13:00; the skipped hour has no bucket, the repeated one is one bucket of two hours', () => {
    const spring = of('2024-03-10T00:00:00', '2024-03-10T04:00:00', 'hour', 'America/New_York')
    expect(summary(spring)).toEqual([
      ['2024-03-10 00:00:00', '10-Mar 00:00', 1],
      ['2024-03-10 01:00:00', '10-Mar 01:00', 1],
      ['2024-03-10 03:00:00', '10-Mar 03:00', 1],
      ['2024-03-10 04:00:00', '10-Mar 04:00', 1],
    ])
    const autumn = of('2024-11-03T00:00:00', '2024-11-03T02:00:00', 'hour', 'America/New_York')
    expect(summary(autumn)).toEqual([
      ['2024-11-03 00:00:00', '3-Nov 00:00', 1],
      ['2024-11-03 01:00:00', '3-Nov 01:00', 2],
      ['2024-11-03 02:00:00', '3-Nov 02:00', 1],
    ])
    // Kolkata's hours start at half past in UTC; Kathmandu's at a quarter past
    expect(new Date(of('2024-01-01T13:00:00', '2024-01-01T13:00:00', 'hour', 'Asia/Kolkata')[0].start).toISOString()).toBe('2024-01-01T07:30:00.000Z')
    expect(of('2024-01-01T13:00:00', '2024-01-01T13:00:00', 'hour', 'Asia/Kathmandu')[0]).toMatchObject({ day: '2024-01-01 13:00:00', label: '1-Jan 13:00', start: utc('2024-01-01T07:15:00Z') })
    // Lord Howe moves its clocks by half an hour: a 90-minute 01:00 in April, a 30-minute 02:00 in October
    expect(summary(of('2024-04-07T00:00:00', '2024-04-07T02:00:00', 'hour', 'Australia/Lord_Howe')).map((b) => b[2])).toEqual([1, 1.5, 1])
    expect(summary(of('2024-10-06T01:00:00', '2024-10-06T03:00:00', 'hour', 'Australia/Lord_Howe'))).toEqual([
      ['2024-10-06 01:00:00', '6-Oct 01:00', 1],
      ['2024-10-06 02:00:00', '6-Oct 02:00', 0.5],
      ['2024-10-06 03:00:00', '6-Oct 03:00', 1],
    ])
  })

  test('weeks start on Sunday or Monday; labels clipped to the range, across months and years', () => {
    expect(summary(of('2024-01-03', '2024-01-20', 'week', 'UTC', 0)).map((b) => [b[0], b[1]])).toEqual([
      ['2023-12-31', '3–6 Jan'],
      ['2024-01-07', '7–13 Jan'],
      ['2024-01-14', '14–20 Jan'],
    ])
    expect(summary(of('2024-01-03', '2024-01-20', 'week', 'UTC', 1)).map((b) => [b[0], b[1]])).toEqual([
      ['2024-01-01', '3–7 Jan'],
      ['2024-01-08', '8–14 Jan'],
      ['2024-01-15', '15–20 Jan'],
    ])
    expect(of('2024-01-25', '2024-02-10', 'week', 'Asia/Kathmandu', 1).map((b) => b.label)).toEqual(['25–28 Jan', '29 Jan–4 Feb', '5–10 Feb'])
    expect(of('2024-12-29', '2025-01-04', 'week', 'UTC', 1).map((b) => [b.day, b.label])).toEqual([
      ['2024-12-23', '29 Dec'],
      ['2024-12-30', '30 Dec 2024–4 Jan 2025'],
    ])
    // the first bucket counts from the range's start, not the week's
    const first = of('2024-01-03', '2024-01-20', 'week', 'America/New_York', 0)[0]
    expect(first.start).toBe(utc('2024-01-03T05:00:00Z'))
  })

  test('months: Jan 2024, first and last clipped, February of a leap year', () => {
    const list = of('2024-01-15', '2024-04-10', 'month', 'Europe/London')
    expect(list.map((b) => [b.day, b.label])).toEqual([
      ['2024-01-01', 'Jan 2024'],
      ['2024-02-01', 'Feb 2024'],
      ['2024-03-01', 'Mar 2024'],
      ['2024-04-01', 'Apr 2024'],
    ])
    expect(list[0].start).toBe(utc('2024-01-15T00:00:00Z'))
    expect((list[1].end - list[1].start) / (24 * HOUR_MS)).toBe(29)
    // March 2024 in London lost an hour to summer time
    expect((list[2].end - list[2].start) / HOUR_MS).toBe(31 * 24 - 1)
    expect(list[3].end).toBe(utc('2024-04-10T23:00:00Z'))
  })

  test('buckets tile the range: no gap, no overlap', () => {
    for (const [zone, interval] of [['Australia/Lord_Howe', 'hour'], ['America/New_York', 'day'], ['Asia/Kathmandu', 'week'], ['Pacific/Apia', 'month']] as const) {
      const range = resolveDateRange({ date_from: '2011-06-01', date_to: interval === 'hour' ? '2011-06-20' : '2012-06-01' }, { now: NOW, timezone: zone, interval })
      const list = buckets(range, interval, { timezone: zone })
      expect(list[0].start).toBe(range.from)
      expect(list[list.length - 1].end).toBe(range.to)
      for (let i = 1; i < list.length; i++) expect(list[i].start).toBe(list[i - 1].end)
    }
  })

  test('an instant finds its bucket by binary search, and by the wall time the SQL side computes', () => {
    const truncate = { hour: (w: number) => Math.floor(w / HOUR_MS) * HOUR_MS, day: wallStartOfDay, week: (w: number) => wallStartOfWeek(w, 1), month: wallStartOfMonth }
    for (const zone of ['America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Europe/London']) {
      for (const interval of ['hour', 'day', 'week', 'month'] as const) {
        const range = resolveDateRange({ date_from: '2024-03-01', date_to: interval === 'hour' ? '2024-04-30' : '2024-12-31' }, { now: NOW, timezone: zone, interval })
        const list = buckets(range, interval, { timezone: zone, weekStartDay: 1 })
        const spans = offsetTransitions(zone, range.from, range.to)
        expect(bucketIndexAt(list, range.from - 1)).toBe(-1)
        expect(bucketIndexAt(list, range.to)).toBe(-1)
        expect(bucketIndexAt(list, range.from)).toBe(0)
        expect(bucketIndexAt(list, range.to - 1)).toBe(list.length - 1)
        for (let i = 0; i < 300; i++) {
          const t = range.from + Math.floor(Math.random() * (range.to - range.from))
          const index = bucketIndexAt(list, t)
          expect(list[index].start <= t && t < list[index].end).toBe(true)
          // the SQL side: shift by the span the instant is in, truncate in UTC, group by that wall time
          let offset = spans[0].offsetMs
          for (const span of spans) if (span.fromUtc <= t) offset = span.offsetMs
          expect(bucketIndexOfWall(list, truncate[interval](t + offset))).toBe(index)
        }
      }
    }
  })

  test(`at most ${MAX_BUCKETS.toLocaleString('en-US')} buckets: past it a 400 asking for a larger interval`, () => {
    const started = performance.now()
    const most = of('2024-01-01T00:00:00', '2025-02-15T23:00:00', 'hour', 'America/New_York')
    console.log(`${most.length} hour buckets in New York: ${(performance.now() - started).toFixed(0)} ms`)
    expect(most.length).toBeGreaterThan(9_000)
    expect(most.length).toBeLessThanOrEqual(MAX_BUCKETS)
    const refusals: [string, Interval][] = [['-2y', 'hour'], ['all', 'hour'], ['1970-01-01', 'day']]
    for (const [from, interval] of refusals) {
      const range = resolveDateRange({ date_from: from }, { now: NOW, timezone: 'UTC', interval, firstEventAt: utc('1970-01-01T00:00:00Z') })
      let error: unknown
      const before = performance.now()
      try {
        buckets(range, interval, { timezone: 'UTC' })
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(ApiError)
      expect((error as ApiError).status).toBe(400)
      expect((error as ApiError).toBody()).toMatchObject({ code: 'too_many_buckets', attr: 'interval' })
      expect((error as ApiError).detail).toContain('larger interval')
      expect(performance.now() - before).toBeLessThan(1000)
    }
    // the same spans by week or month are fine
    expect(of('1970-01-01', '2025-12-31', 'month', 'UTC')).toHaveLength(56 * 12)
  })
})
