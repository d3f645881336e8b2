// dateRange inputs resolved in the project's timezone, against answers worked out by hand.
import { describe, expect, test } from 'bun:test'
import { ApiError } from '../http/errors'
import { comparisonRange, resolveDateRange, type DateRangeContext, type DateRangeInput } from './date-range'

const utc = (iso: string) => Date.parse(iso)
const iso = (ms: number) => new Date(ms).toISOString()

function resolved(input: DateRangeInput, ctx: DateRangeContext) {
  const r = resolveDateRange(input, ctx)
  return { from: iso(r.from), to: iso(r.to), date_from: r.date_from, date_to: r.date_to }
}

describe('resolveDateRange', () => {
  test('defaults: from the start of the day 7 days ago to the end of today, in the zone', () => {
    // 11:30 in New York (EDT, two days after the clocks went forward)
    const now = utc('2024-03-12T15:30:00Z')
    expect(resolved({}, { now, timezone: 'America/New_York', interval: 'day' })).toEqual({
      from: '2024-03-05T05:00:00.000Z',
      to: '2024-03-13T04:00:00.000Z',
      date_from: '2024-03-05T00:00:00-05:00',
      date_to: '2024-03-12T23:59:59.999999-04:00',
    })
    expect(resolved({ date_from: null, date_to: null }, { now, timezone: 'UTC', interval: 'day' })).toEqual({
      from: '2024-03-05T00:00:00.000Z',
      to: '2024-03-13T00:00:00.000Z',
      date_from: '2024-03-05T00:00:00Z',
      date_to: '2024-03-12T23:59:59.999999Z',
    })
  })

  test('relative dates: -Nh, -Nd, -Nw, -Nm, -Ny, mStart, -1mStart, yStart, dStart, -1mEnd', () => {
    // 01:30 on 1 February in Kolkata (+05:30)
    const ctx: DateRangeContext = { now: utc('2024-01-31T20:00:00Z'), timezone: 'Asia/Kolkata', interval: 'day' }
    const from = (date_from: string, extra: Partial<DateRangeContext> = {}) => resolved({ date_from }, { ...ctx, ...extra }).date_from
    expect(from('-24h', { interval: 'hour' })).toBe('2024-01-31T01:00:00+05:30')
    expect(from('-24h')).toBe('2024-01-31T01:00:00+05:30') // -Nh keeps its hour whatever the interval
    expect(from('-1d')).toBe('2024-01-31T00:00:00+05:30')
    expect(from('-7d')).toBe('2024-01-25T00:00:00+05:30')
    expect(from('-2w')).toBe('2024-01-18T00:00:00+05:30')
    expect(from('-1m')).toBe('2024-01-01T00:00:00+05:30')
    expect(from('-3m')).toBe('2023-11-01T00:00:00+05:30')
    expect(from('-1y')).toBe('2023-02-01T00:00:00+05:30')
    expect(from('mStart')).toBe('2024-02-01T00:00:00+05:30')
    expect(from('-1mStart')).toBe('2024-01-01T00:00:00+05:30')
    expect(from('-2mStart')).toBe('2023-12-01T00:00:00+05:30')
    expect(from('yStart')).toBe('2024-01-01T00:00:00+05:30')
    expect(from('-1yStart')).toBe('2023-01-01T00:00:00+05:30')
    expect(from('dStart')).toBe('2024-02-01T00:00:00+05:30')
    expect(from('qStart')).toBe('2024-01-01T00:00:00+05:30')
    // 1 Feb 2024 is a Thursday
    expect(from('wStart')).toBe('2024-01-28T00:00:00+05:30')
    expect(from('wStart', { weekStartDay: 1 })).toBe('2024-01-29T00:00:00+05:30')
    expect(resolved({ date_from: '-1mStart', date_to: '-1mEnd' }, ctx)).toEqual({
      from: '2023-12-31T18:30:00.000Z',
      to: '2024-01-31T18:30:00.000Z',
      date_from: '2024-01-01T00:00:00+05:30',
      date_to: '2024-01-31T23:59:59.999999+05:30',
    })
    // an hour interval ends at the end of the current hour
    expect(resolved({ date_from: '-24h' }, { ...ctx, interval: 'hour' })).toMatchObject({ to: '2024-01-31T20:30:00.000Z', date_to: '2024-02-01T01:59:59.999999+05:30' })
  })

  test('months end where they end: leap years and 31st days', () => {
    const at = (now: string, date_from: string) => resolved({ date_from }, { now: utc(now), timezone: 'UTC', interval: 'day' }).date_from
    expect(at('2024-03-31T12:00:00Z', '-1m')).toBe('2024-02-29T00:00:00Z')
    expect(at('2023-03-31T12:00:00Z', '-1m')).toBe('2023-02-28T00:00:00Z')
    expect(at('2024-02-29T12:00:00Z', '-1y')).toBe('2023-02-28T00:00:00Z')
    expect(at('2024-05-31T12:00:00Z', '-3m')).toBe('2024-02-29T00:00:00Z')
  })

  test('ISO dates and datetimes: read in the zone unless they carry an offset; explicitDate keeps them as given', () => {
    const ctx: DateRangeContext = { now: utc('2024-03-01T00:00:00Z'), timezone: 'Asia/Kathmandu', interval: 'day' }
    expect(resolved({ date_from: '2024-01-15', date_to: '2024-01-20' }, ctx)).toEqual({
      from: '2024-01-14T18:15:00.000Z',
      to: '2024-01-20T18:15:00.000Z',
      date_from: '2024-01-15T00:00:00+05:45',
      date_to: '2024-01-20T23:59:59.999999+05:45',
    })
    expect(resolved({ date_from: '2024-01-15T10:20:30', date_to: '2024-01-15T12:00:00Z', explicitDate: true }, ctx)).toEqual({
      from: '2024-01-15T04:35:30.000Z',
      to: '2024-01-15T12:00:00.001Z',
      date_from: '2024-01-15T10:20:30+05:45',
      date_to: '2024-01-15T17:45:00+05:45',
    })
    // without explicitDate a datetime still starts at its day's start
    expect(resolved({ date_from: '2024-01-15 10:20', date_to: '2024-01-16T03:00:00+02:00' }, ctx)).toMatchObject({
      date_from: '2024-01-15T00:00:00+05:45',
      date_to: '2024-01-16T23:59:59.999999+05:45',
    })
    expect(resolved({ date_from: '2024-02-29', date_to: '2024-02-29' }, { ...ctx, timezone: 'UTC' })).toMatchObject({ from: '2024-02-29T00:00:00.000Z', to: '2024-03-01T00:00:00.000Z' })
  })

  test('"all" starts at the first event (at its day start), or 2015-01-01 without events', () => {
    const ctx: DateRangeContext = { now: utc('2024-03-01T00:00:00Z'), timezone: 'Europe/London', interval: 'day' }
    expect(resolved({ date_from: 'all' }, { ...ctx, firstEventAt: utc('2023-06-15T12:34:00Z') }).date_from).toBe('2023-06-15T00:00:00+01:00')
    expect(resolved({ date_from: 'all' }, ctx).date_from).toBe('2015-01-01T00:00:00Z')
  })

  test('a range over a clock change spans the local days, not 24-hour steps', () => {
    const r = resolveDateRange({ date_from: '2024-10-26', date_to: '2024-10-28' }, { now: 0, timezone: 'Europe/London', interval: 'day' })
    // 26 October (BST, 24 h) + 27 October (25 h) + 28 October (GMT, 24 h)
    expect((r.to - r.from) / 3_600_000).toBe(73)
  })

  test('bad values: a 400 naming dateRange, never a crash', () => {
    const ctx: DateRangeContext = { now: utc('2024-03-01T00:00:00Z'), timezone: 'UTC', interval: 'day' }
    const bad: DateRangeInput[] = [
      { date_from: 'tomorrow' },
      { date_from: '-7x' },
      { date_from: '7' },
      { date_from: 'Start' },
      { date_from: '2024-02-30' },
      { date_from: '2023-02-29' },
      { date_from: '2024-13-01' },
      { date_from: '2024-01-01T25:00:00' },
      { date_from: '2024-01-01T10:00:00+15:00' },
      { date_from: '-7d; drop table events' },
      { date_from: '1960-01-01' },
      { date_from: '-99999y' },
      { date_from: '2100-01-01', date_to: '2100-02-01' },
      { date_from: 'x'.repeat(100_000) },
      { date_from: 42 as unknown as string },
      { date_from: { a: 1 } as unknown as string },
      { date_from: '2024-02-01', date_to: '2024-01-01' },
      { date_from: '2024-01-01T10:00:01', date_to: '2024-01-01T10:00:00', explicitDate: true },
    ]
    for (const input of bad) {
      let error: unknown
      try {
        resolveDateRange(input, ctx)
      } catch (e) {
        error = e
      }
      expect([input, error instanceof ApiError]).toEqual([input, true])
      expect((error as ApiError).toBody()).toMatchObject({ type: 'validation_error', code: 'invalid_date_range', attr: 'dateRange' })
      expect((error as ApiError).detail.length).toBeLessThan(200)
    }
  })
})

describe('comparisonRange', () => {
  test('the previous period of equal local length, or moved back by compare_to', () => {
    const now = utc('2024-03-12T15:30:00Z')
    const range = resolveDateRange({}, { now, timezone: 'America/New_York', interval: 'day' })
    const previous = comparisonRange(range, 'America/New_York')
    expect([previous.date_from, previous.date_to]).toEqual(['2024-02-26T00:00:00-05:00', '2024-03-04T23:59:59.999999-05:00'])
    expect(previous.to).toBe(range.from)
    const monthBefore = comparisonRange(range, 'America/New_York', '-1m')
    expect([monthBefore.date_from, monthBefore.date_to]).toEqual(['2024-02-05T00:00:00-05:00', '2024-02-12T23:59:59.999999-05:00'])
    for (const compareTo of ['1w', '-1x', 'x'.repeat(1000), '-1wStart']) expect(() => comparisonRange(range, 'UTC', compareTo)).toThrow(ApiError)
  })
})
