// The buckets of src/insights agree with ClickHouse's own timezone functions: the day, week and month an instant
// falls in, and where that day starts (also where its midnight was skipped or lived twice). And the way the SQL
// side is meant to bucket (shift each timestamp by the offset spans, truncate with the UTC functions, which
// ClickHouse 18.16 has too: it lacks toStartOfWeek) lands every instant in the same bucket.
import { expect, test } from 'bun:test'
import { bucketIndexAt, bucketIndexOfWall, buckets } from '../../src/insights/buckets'
import { resolveDateRange, type Interval } from '../../src/insights/date-range'
import { offsetTransitions, wallToUtc } from '../../src/lib/timezone'

const ZONES = ['America/New_York', 'Europe/London', 'Asia/Kolkata', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Apia', 'America/Sao_Paulo', 'America/Havana']
const SAMPLES = 1500

/** Runs a SELECT, answers its rows as objects. */
export type RunQuery = (sql: string) => Promise<Record<string, string | number>[]>

/** `ts + offset of its span` in seconds, as the SQL side will write it. */
function offsetExpression(timezone: string, from: number, to: number): string {
  const spans = offsetTransitions(timezone, from, to)
  if (spans.length === 1) return String(spans[0].offsetMs / 1000)
  const branches = spans.slice(1).map((s, i) => `t < ${s.fromUtc / 1000}, ${spans[i].offsetMs / 1000}`)
  return `multiIf(${branches.join(', ')}, ${spans[spans.length - 1].offsetMs / 1000})`
}

export function insightBucketsContract(name: string, run: () => Promise<RunQuery>, options: { startOfWeek: boolean }): void {
  test(`${name}: day, week, month and the start of the day agree, for instants across 2011-2024 in odd zones`, async () => {
    const query = await run()
    const started = performance.now()
    let compared = 0
    for (const timezone of ZONES) {
      const range = resolveDateRange({ date_from: '2011-01-01', date_to: '2024-12-31' }, { now: Date.now(), timezone, interval: 'day' })
      const of = (interval: Interval, weekStartDay = 0) => buckets(range, interval, { timezone, weekStartDay })
      const [days, sundayWeeks, mondayWeeks, months] = [of('day'), of('week', 0), of('week', 1), of('month')]
      const instants = Array.from({ length: SAMPLES }, () => Math.floor((range.from + Math.random() * (range.to - range.from)) / 1000))
      // either side of every clock change, where mistakes hide
      for (const span of offsetTransitions(timezone, range.from, range.to).slice(1)) instants.push(span.fromUtc / 1000 - 1, span.fromUtc / 1000)
      const local = `toDateTime(t + ${offsetExpression(timezone, range.from, range.to)}, 'UTC')`
      const zoneWeek = options.startOfWeek
        ? `toString(toStartOfWeek(ts, 0, '${timezone}')) AS zone_sunday_week, toString(toStartOfWeek(ts, 1, '${timezone}')) AS zone_monday_week,`
        : ''
      const rows = await query(`
        SELECT t, toUnixTimestamp(toStartOfDay(ts, '${timezone}')) AS zone_day_start, toString(toDate(ts, '${timezone}')) AS zone_day,
               toString(toStartOfMonth(ts, '${timezone}')) AS zone_month, ${zoneWeek}
               toUnixTimestamp(toStartOfDay(${local}, 'UTC')) AS wall_day,
               toString(toMonday(${local})) AS wall_monday_week,
               toString(toMonday(${local} + 86400) - 1) AS wall_sunday_week,
               toUnixTimestamp(toDateTime(toStartOfMonth(${local}), 'UTC')) AS wall_month
        FROM (SELECT arrayJoin([${instants.join(',')}]) AS t, toDateTime(t, 'UTC') AS ts)`)
      expect(rows).toHaveLength(instants.length)
      for (const row of rows) {
        const at = Number(row.t) * 1000
        const day = days[bucketIndexAt(days, at)]
        const sundayWeek = sundayWeeks[bucketIndexAt(sundayWeeks, at)].day
        const mondayWeek = mondayWeeks[bucketIndexAt(mondayWeeks, at)].day
        expect([timezone, row.t, day.day, wallToUtc(timezone, day.wallStart) / 1000]).toEqual([timezone, row.t, row.zone_day, Number(row.zone_day_start)])
        expect(months[bucketIndexAt(months, at)].day).toBe(String(row.zone_month))
        if (options.startOfWeek) expect([sundayWeek, mondayWeek]).toEqual([String(row.zone_sunday_week), String(row.zone_monday_week)])
        expect([sundayWeek, mondayWeek]).toEqual([String(row.wall_sunday_week), String(row.wall_monday_week)])
        expect(bucketIndexOfWall(days, Number(row.wall_day) * 1000)).toBe(bucketIndexAt(days, at))
        expect(bucketIndexOfWall(months, Number(row.wall_month) * 1000)).toBe(bucketIndexAt(months, at))
        compared++
      }
    }
    console.log(`${name}: ${compared} instants in ${ZONES.length} zones agree (${((performance.now() - started) / 1000).toFixed(1)} s)`)
  }, 120_000)
}
