// Offsets, transitions and wall time ↔ UTC against dates whose answers are known (published DST rules).
import { describe, expect, test } from 'bun:test'
import { HOUR_MS, isKnownTimezone, isoLocal, offsetAt, offsetTransitions, wallTimeOf, wallToUtc } from './timezone'

const utc = (iso: string) => Date.parse(iso)
const hours = (h: number) => h * HOUR_MS
/** The wall time straight from Intl, independent of the module's cache. */
function intlWall(zone: string, t: number): number {
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }).formatToParts(t)
  const f = Object.fromEntries(parts.filter((p) => p.type !== 'literal').map((p) => [p.type, Number(p.value)]))
  return Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second) + (t % 1000)
}
const spansOf = (zone: string, from: string, to: string) =>
  offsetTransitions(zone, utc(from), utc(to)).map((s) => [new Date(s.fromUtc).toISOString(), s.offsetMs / HOUR_MS])

describe('offsets of a zone', () => {
  test('at instants on either side of clock changes, and in zones off the hour', () => {
    const vectors: [string, string, number][] = [
      ['UTC', '2024-07-01T00:00:00Z', 0],
      ['America/New_York', '2024-03-10T06:59:59Z', -5],
      ['America/New_York', '2024-03-10T07:00:00Z', -4],
      ['America/New_York', '2024-11-03T05:59:59Z', -4],
      ['America/New_York', '2024-11-03T06:00:00Z', -5],
      ['Europe/London', '2024-03-31T00:59:59Z', 0],
      ['Europe/London', '2024-03-31T01:00:00Z', 1],
      ['Europe/London', '2024-10-27T01:00:00Z', 0],
      ['Asia/Kolkata', '2024-06-01T00:00:00Z', 5.5],
      ['Asia/Kathmandu', '2024-06-01T00:00:00Z', 5.75],
      ['Australia/Lord_Howe', '2024-04-06T14:59:59Z', 11],
      ['Australia/Lord_Howe', '2024-04-06T15:00:00Z', 10.5],
      ['Australia/Lord_Howe', '2024-10-05T15:30:00Z', 11],
      ['Pacific/Apia', '2011-12-30T09:59:59Z', -10],
      ['Pacific/Apia', '2011-12-30T10:00:00Z', 14],
    ]
    for (const [zone, at, offset] of vectors) expect([zone, at, offsetAt(zone, utc(at))]).toEqual([zone, at, hours(offset)])
  })

  test('transitions within a range, found to the second', () => {
    expect(spansOf('America/New_York', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).toEqual([
      ['2024-01-01T00:00:00.000Z', -5],
      ['2024-03-10T07:00:00.000Z', -4],
      ['2024-11-03T06:00:00.000Z', -5],
    ])
    expect(spansOf('Europe/London', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).toEqual([
      ['2024-01-01T00:00:00.000Z', 0],
      ['2024-03-31T01:00:00.000Z', 1],
      ['2024-10-27T01:00:00.000Z', 0],
    ])
    expect(spansOf('Australia/Lord_Howe', '2024-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).toEqual([
      ['2024-01-01T00:00:00.000Z', 11],
      ['2024-04-06T15:00:00.000Z', 10.5],
      ['2024-10-05T15:30:00.000Z', 11],
    ])
    expect(spansOf('Pacific/Apia', '2011-12-01T00:00:00Z', '2012-01-01T00:00:00Z')).toEqual([
      ['2011-12-01T00:00:00.000Z', -10],
      ['2011-12-30T10:00:00.000Z', 14],
    ])
    expect(spansOf('Asia/Kolkata', '2020-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).toEqual([['2020-01-01T00:00:00.000Z', 5.5]])
    expect(spansOf('UTC', '2020-01-01T00:00:00Z', '2025-01-01T00:00:00Z')).toEqual([['2020-01-01T00:00:00.000Z', 0]])
    // a range ending on a transition does not hold it
    expect(spansOf('America/New_York', '2024-03-01T00:00:00Z', '2024-03-10T07:00:00Z')).toHaveLength(1)
  })

  test('shifting by the spans gives the same wall time as the zone data (what the SQL side will do)', () => {
    for (const zone of ['America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Apia']) {
      const from = utc('2011-01-01T00:00:00Z')
      const to = utc('2025-01-01T00:00:00Z')
      const spans = offsetTransitions(zone, from, to)
      for (let i = 0; i < 500; i++) {
        const t = from + Math.floor(Math.random() * (to - from))
        let span = spans[0]
        for (const s of spans) if (s.fromUtc <= t) span = s
        expect(t + span.offsetMs).toBe(intlWall(zone, t))
        expect(wallTimeOf(zone, t)).toBe(intlWall(zone, t))
      }
    }
  })

  test('the zone data of 1970-2099 is read once per zone and year (printed, not asserted)', () => {
    const started = performance.now()
    const spans = offsetTransitions('Europe/Paris', utc('1970-01-01T00:00:00Z'), utc('2099-12-31T00:00:00Z'))
    const first = performance.now() - started
    const again = performance.now()
    offsetTransitions('Europe/Paris', utc('1970-01-01T00:00:00Z'), utc('2099-12-31T00:00:00Z'))
    console.log(`Europe/Paris 1970-2099: ${spans.length} spans, first read ${first.toFixed(0)} ms, again ${(performance.now() - again).toFixed(1)} ms`)
    expect(spans.length).toBeGreaterThan(200)
  })
})

describe('local wall time to UTC', () => {
  const wall = (iso: string) => utc(`${iso}Z`)
  test('an ordinary time, and every instant of a year back and forth', () => {
    expect(new Date(wallToUtc('Asia/Kathmandu', wall('2024-01-01T00:00:00'))).toISOString()).toBe('2023-12-31T18:15:00.000Z')
    expect(new Date(wallToUtc('Asia/Kolkata', wall('2024-01-01T00:00:00'))).toISOString()).toBe('2023-12-31T18:30:00.000Z')
    for (const zone of ['America/New_York', 'Australia/Lord_Howe']) {
      for (let t = utc('2024-01-01T00:00:00Z'); t < utc('2025-01-01T00:00:00Z'); t += 15 * 60_000) {
        const back = wallToUtc(zone, wallTimeOf(zone, t))
        // a wall time lived twice gives its first instant
        expect(back === t || (back < t && wallTimeOf(zone, back) === wallTimeOf(zone, t))).toBe(true)
      }
    }
  })

  test('a time the clocks skipped is the instant they jumped; a time lived twice is the first', () => {
    const cases: [string, string, string][] = [
      ['America/New_York', '2024-03-10T02:30:00', '2024-03-10T07:00:00.000Z'],
      ['America/New_York', '2024-11-03T01:30:00', '2024-11-03T05:30:00.000Z'],
      // São Paulo started summer time at midnight: 2018-11-04 began at 01:00
      ['America/Sao_Paulo', '2018-11-04T00:00:00', '2018-11-04T03:00:00.000Z'],
      // Havana set its clocks back from 01:00 to 00:00: that midnight happened twice
      ['America/Havana', '2023-11-05T00:00:00', '2023-11-05T04:00:00.000Z'],
      // Samoa skipped 30 December 2011 entirely
      ['Pacific/Apia', '2011-12-30T00:00:00', '2011-12-30T10:00:00.000Z'],
      ['Pacific/Apia', '2011-12-31T00:00:00', '2011-12-30T10:00:00.000Z'],
      ['Australia/Lord_Howe', '2024-10-06T02:00:00', '2024-10-05T15:30:00.000Z'],
      ['Australia/Lord_Howe', '2024-04-07T01:45:00', '2024-04-06T14:45:00.000Z'],
    ]
    for (const [zone, local, expected] of cases) expect([zone, local, new Date(wallToUtc(zone, wall(local))).toISOString()]).toEqual([zone, local, expected])
  })

  test('ISO strings with the offset, as resolved_date_range shows them', () => {
    expect(isoLocal('UTC', utc('2024-01-01T00:00:00Z'))).toBe('2024-01-01T00:00:00Z')
    expect(isoLocal('Asia/Kathmandu', utc('2023-12-31T18:15:00Z'))).toBe('2024-01-01T00:00:00+05:45')
    expect(isoLocal('America/New_York', utc('2024-03-11T03:59:59.999Z'), 999)).toBe('2024-03-10T23:59:59.999999-04:00')
  })

  test('known names: the runtime’s IANA list and UTC, spelled exactly', () => {
    for (const name of ['UTC', 'Europe/London', 'America/New_York', 'Asia/Kolkata', 'Asia/Kathmandu', 'Pacific/Apia']) expect(isKnownTimezone(name)).toBe(true)
    for (const name of ['utc', 'europe/london', 'Mars/Base', '', 'Europe/London ', '+05:00']) expect(isKnownTimezone(name)).toBe(false)
  })
})
