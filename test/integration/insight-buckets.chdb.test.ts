// The buckets of src/insights agree with a current ClickHouse's own timezone functions (chDB, in-process): the day,
// week and month an instant falls in, and where that day starts (also where its midnight was skipped or lived
// twice). And the way the SQL side is meant to bucket (shift each timestamp by the offset spans, truncate in UTC)
// lands every instant in the same bucket.
import { expect, test } from 'bun:test'
import { bucketIndexAt, bucketIndexOfWall, buckets } from '../../src/insights/buckets'
import { resolveDateRange, type Interval } from '../../src/insights/date-range'
import { offsetTransitions, wallToUtc } from '../../src/insights/timezone'
import { chdbClient, describeWithChdb } from '../helpers/chdb'

const ZONES = ['America/New_York', 'Europe/London', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Apia', 'America/Sao_Paulo', 'America/Havana']
const SAMPLES = 1500

interface Row {
  t: number
  day_start: number
  day: string
  sunday_week: string
  monday_week: string
  month: string
  shifted_day: number
  shifted_month: number
}

describeWithChdb('insight buckets against ClickHouse', () => {
  test('day, week, month and the start of the day, for instants across 2011-2024 in odd zones', async () => {
    const client = chdbClient()
    const started = performance.now()
    let compared = 0
    for (const timezone of ZONES) {
      const range = resolveDateRange({ date_from: '2011-01-01', date_to: '2024-12-31' }, { now: Date.now(), timezone, interval: 'day' })
      const of = (interval: Interval, weekStartDay = 0) => buckets(range, interval, { timezone, weekStartDay })
      const days = of('day')
      const sundayWeeks = of('week', 0)
      const mondayWeeks = of('week', 1)
      const months = of('month')
      const instants = Array.from({ length: SAMPLES }, () => Math.floor((range.from + Math.random() * (range.to - range.from)) / 1000))
      // instants at and around every midnight and clock change are where mistakes hide
      for (const span of offsetTransitions(timezone, range.from, range.to).slice(1)) instants.push(span.fromUtc / 1000 - 1, span.fromUtc / 1000)
      // the SQL side: local wall time = timestamp + the offset of its span, then the UTC functions
      const spans = offsetTransitions(timezone, range.from, range.to)
      const offset =
        spans.length === 1
          ? String(spans[0].offsetMs / 1000)
          : `multiIf(${spans.slice(1).map((s, i) => `ts < toDateTime(${s.fromUtc / 1000}, 'UTC'), ${spans[i].offsetMs / 1000}`).join(', ')}, ${spans[spans.length - 1].offsetMs / 1000})`
      const query = `
        SELECT t, toUnixTimestamp(toStartOfDay(ts, '${timezone}')) AS day_start, toString(toDate(ts, '${timezone}')) AS day,
               toString(toStartOfWeek(ts, 0, '${timezone}')) AS sunday_week, toString(toStartOfWeek(ts, 1, '${timezone}')) AS monday_week,
               toString(toStartOfMonth(ts, '${timezone}')) AS month,
               toUnixTimestamp(toStartOfDay(toDateTime(toUnixTimestamp(ts) + ${offset}, 'UTC'), 'UTC')) AS shifted_day,
               toUnixTimestamp(toDateTime(toStartOfMonth(toDateTime(toUnixTimestamp(ts) + ${offset}, 'UTC'), 'UTC'), 'UTC')) AS shifted_month
        FROM (SELECT arrayJoin([${instants.join(',')}]) AS t, toDateTime(t, 'UTC') AS ts)`
      const rows = (await (await client.query({ query, format: 'JSONEachRow' })).json()) as Row[]
      expect(rows).toHaveLength(instants.length)
      for (const row of rows) {
        const at = Number(row.t) * 1000
        const day = days[bucketIndexAt(days, at)]
        expect([timezone, row.t, day.day, wallToUtc(timezone, day.wallStart) / 1000]).toEqual([timezone, row.t, row.day, Number(row.day_start)])
        expect(sundayWeeks[bucketIndexAt(sundayWeeks, at)].day).toBe(row.sunday_week)
        expect(mondayWeeks[bucketIndexAt(mondayWeeks, at)].day).toBe(row.monday_week)
        expect(months[bucketIndexAt(months, at)].day).toBe(row.month)
        expect(bucketIndexOfWall(days, Number(row.shifted_day) * 1000)).toBe(bucketIndexAt(days, at))
        expect(bucketIndexOfWall(months, Number(row.shifted_month) * 1000)).toBe(bucketIndexAt(months, at))
        compared++
      }
    }
    console.log(`${compared} instants in ${ZONES.length} zones agree with ClickHouse (${((performance.now() - started) / 1000).toFixed(1)} s)`)
  })
})
