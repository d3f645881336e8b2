import { describe, expect, test } from 'bun:test'
import { compareInstants, instantFromUnixSeconds, parseDateString, parseFilterDate, parseIncomingDate, parseRelativeDate, PythonException } from './dates'
import { pyFloatFromString } from './python/pyvalue'

const NOW = new Date('2020-01-01T12:01:20.134Z') // the frozen time of PostHog's tests
const iso = (d: Date | null) => (d === null ? null : d.toISOString())

describe('parseRelativeDate', () => {
  const table: [string, string][] = [
    ['1h', '2020-01-01T11:01:20.134Z'],
    ['24h', '2019-12-31T12:01:20.134Z'],
    ['1d', '2019-12-31T12:01:20.134Z'],
    ['30h', '2019-12-31T06:01:20.134Z'],
    ['7d', '2019-12-25T12:01:20.134Z'],
    ['1w', '2019-12-25T12:01:20.134Z'],
    ['30d', '2019-12-02T12:01:20.134Z'],
    ['8w', '2019-11-06T12:01:20.134Z'],
    ['1m', '2019-12-01T12:01:20.134Z'],
    ['10m', '2019-03-01T12:01:20.134Z'],
    ['24m', '2018-01-01T12:01:20.134Z'],
    ['1y', '2019-01-01T12:01:20.134Z'],
    ['12m', '2019-01-01T12:01:20.134Z'],
    ['8y', '2012-01-01T12:01:20.134Z'],
  ]
  for (const [input, expected] of table) {
    test(`${input} from 2020-01-01T12:01:20.134Z is ${expected}`, () => {
      expect(iso(parseRelativeDate(input, NOW))).toBe(expected)
    })
  }

  test('calendar months and years from 2020-04-03', () => {
    const now = new Date('2020-04-03T00:00:00Z')
    expect(iso(parseRelativeDate('1m', now))).toBe('2020-03-03T00:00:00.000Z')
    expect(iso(parseRelativeDate('4m', now))).toBe('2019-12-03T00:00:00.000Z')
    expect(iso(parseRelativeDate('1y', now))).toBe('2019-04-03T00:00:00.000Z')
  })

  test('the day is clamped to the month length, like relativedelta', () => {
    expect(iso(parseRelativeDate('1m', new Date('2020-03-31T10:00:00Z')))).toBe('2020-02-29T10:00:00.000Z')
    expect(iso(parseRelativeDate('1m', new Date('2021-03-31T10:00:00Z')))).toBe('2021-02-28T10:00:00.000Z')
    expect(iso(parseRelativeDate('1y', new Date('2020-02-29T10:00:00Z')))).toBe('2019-02-28T10:00:00.000Z')
  })

  test('the sign is ignored and leading zeros are fine', () => {
    expect(iso(parseRelativeDate('-7d', NOW))).toBe('2019-12-25T12:01:20.134Z')
    expect(iso(parseRelativeDate('000h', NOW))).toBe('2020-01-01T12:01:20.134Z')
    expect(iso(parseRelativeDate('9999h', NOW))).toBe('2018-11-10T21:01:20.134Z')
  })

  test('invalid inputs are not relative', () => {
    for (const s of ['1', '1x', '1.2y', '1z', '1s', '123344000.134m', 'bazinga', '000bello', '000hello', '1000000h', '100000000000000000y', '10000h', '', '-', 'd', '1D', '+1d', ' 1d', '1d ']) {
      expect(parseRelativeDate(s, NOW)).toBeNull()
    }
  })

  test('a result before year 1 is not a date (Python raises, the server treats it as unparseable)', () => {
    expect(parseRelativeDate('2020y', NOW)).toBeNull()
    expect(iso(parseRelativeDate('2019y', NOW))).toBe('0001-01-01T12:01:20.134Z')
  })

  test('Python `$` accepts one trailing newline', () => {
    expect(iso(parseRelativeDate('1d\n', NOW))).toBe('2019-12-31T12:01:20.134Z')
  })
})

const at = (s: string) => {
  const i = parseDateString(s, NOW)
  if (!i) return null
  return new Date(i.sec * 1000 + Math.floor(i.us / 1000)).toISOString() + (i.us % 1000 ? `+${i.us % 1000}us` : '')
}

describe('dateutil.parser.parse (naive → UTC; defaults from today 2020-01-01)', () => {
  const rows: [string, string | null][] = [
    ['2022-05-01', '2022-05-01T00:00:00.000Z'],
    ['2022-05-01T10:20:30Z', '2022-05-01T10:20:30.000Z'],
    ['2022-05-01T10:20:30.123456Z', '2022-05-01T10:20:30.123Z+456us'],
    ['2022-05-01T10:20:30.1234567', '2022-05-01T10:20:30.123Z+456us'],
    ['2022-05-01 10:20', '2022-05-01T10:20:00.000Z'],
    ['2022-05-01T10:20:30+02:00', '2022-05-01T08:20:30.000Z'],
    ['2022-05-01T10:20:30-0530', '2022-05-01T15:50:30.000Z'],
    ['2022-05-01T10:20:30 UTC', '2022-05-01T10:20:30.000Z'],
    ['2022-05-01T10:20:30 EST', '2022-05-01T10:20:30.000Z'], // unknown zone name: ignored
    ['2022-05-01T10:20:30 GMT+3', '2022-05-01T13:20:30.000Z'], // POSIX sign: "my time + 3 is GMT"
    ['20220501', '2022-05-01T00:00:00.000Z'],
    ['20220501T1020', '2022-05-01T10:20:00.000Z'],
    ['01/02/2022', '2022-01-02T00:00:00.000Z'], // month first
    ['13/02/2022', '2022-02-13T00:00:00.000Z'], // day first when the first number cannot be a month
    ['2022.05.01', '2022-05-01T00:00:00.000Z'],
    ['Jan 5 2022', '2022-01-05T00:00:00.000Z'],
    ['Wed, 05 Jan 2022 10:00:00 GMT', '2022-01-05T10:00:00.000Z'],
    ['5 January 2022 10pm', '2022-01-05T22:00:00.000Z'],
    ['12:30', '2020-01-01T12:30:00.000Z'], // today
    ['2022', '2022-01-01T00:00:00.000Z'], // month and day of today
    ['5', '2020-01-05T00:00:00.000Z'], // day of the current month
    ['45', '2045-01-01T00:00:00.000Z'], // two-digit year, pivoted around the current year
    ['99', '1999-01-01T00:00:00.000Z'],
    ['13m', '2020-01-01T00:13:00.000Z'], // 13 minutes
    ['1.5h', '2020-01-01T01:30:00.000Z'],
    ['1.5', '2020-01-01T00:00:00.000Z'], // a day of 1
    ['١٠:٣٠', '2020-01-01T10:30:00.000Z'], // Unicode digits
    ['2022-02-30', null],
    ['2022-13-01', null],
    ['25:00', null],
    ['1577836800', null], // ten digits: a year out of range (the caller then tries float seconds)
    ['bazinga', null],
    ['', null],
    [' - ', null],
    ['1s', '2020-01-01T00:00:01.000Z'],
    ['Tue Mar 31 2026 10:20:30 GMT+0000 (Coordinated Universal Time)', null],
  ]
  for (const [input, expected] of rows) {
    test(`${JSON.stringify(input)} → ${expected}`, () => {
      expect(at(input)).toBe(expected)
    })
  }
})

describe('filter dates: relative first, then dateutil', () => {
  test('relative values use now', () => {
    const i = parseFilterDate('-7d', NOW)!
    expect(new Date(i.sec * 1000 + i.us / 1000).toISOString()).toBe('2019-12-25T12:01:20.134Z')
  })
  test('an unparseable value is null', () => {
    expect(parseFilterDate('None', NOW)).toBeNull()
    expect(parseFilterDate('10000h', NOW)).toBeNull()
  })
})

describe('property dates: numbers are Unix seconds, strings dateutil then float seconds', () => {
  const sec = (v: unknown) => parseIncomingDate(v, NOW, pyFloatFromString)
  test('numbers and numeric strings are seconds (posthog-node would read milliseconds)', () => {
    expect(sec(1577836800)).toEqual({ sec: 1577836800, us: 0 })
    expect(sec(1577836800.5)).toEqual({ sec: 1577836800, us: 500000 })
    expect(sec('1577836800')).toEqual({ sec: 1577836800, us: 0 })
    expect(sec('1577836800.25')).toEqual({ sec: 1577836800, us: 250000 })
    expect(sec(-1.5)).toEqual({ sec: -2, us: 500000 })
  })
  test('booleans are ints in Python: True is one second after the epoch', () => {
    expect(sec(true)).toEqual({ sec: 1, us: 0 })
  })
  test('lists, dicts and None are not dates', () => {
    expect(sec(null)).toBeNull()
    expect(sec([1])).toBeNull()
    expect(sec({})).toBeNull()
    expect(sec('not a date')).toBeNull()
  })
  test('a numeric value outside datetime range raises in Python (uncaught there); a string one is just unparseable', () => {
    expect(() => sec(1e20)).toThrow(PythonException)
    expect(sec('1e20')).toBeNull()
  })
  test('microseconds are rounded half to even, like datetime.fromtimestamp', () => {
    expect(instantFromUnixSeconds(0.0000005)).toEqual({ sec: 0, us: 0 })
    expect(instantFromUnixSeconds(0.0000015)).toEqual({ sec: 0, us: 2 })
  })
  test('instants compare by seconds, then microseconds', () => {
    expect(compareInstants({ sec: 1, us: 5 }, { sec: 1, us: 6 })).toBe(-1)
    expect(compareInstants({ sec: 2, us: 0 }, { sec: 1, us: 999999 })).toBe(1)
    expect(compareInstants({ sec: 1, us: 1 }, { sec: 1, us: 1 })).toBe(0)
  })
})
