// The SQL side's way of bucketing (insight-buckets.contract.ts) on the embedded store's SQLite, whose timestamps are
// epoch milliseconds and whose date functions know only UTC: shift by the offset spans (a CASE), truncate with
// strftime, and every instant lands in the bucket src/insights says.
import { Database } from 'bun:sqlite'
import { describe, expect, test } from 'bun:test'
import { bucketIndexAt, bucketIndexOfWall, buckets } from '../../src/insights/buckets'
import { resolveDateRange } from '../../src/insights/date-range'
import { offsetTransitions } from '../../src/lib/timezone'

const ZONES = ['America/New_York', 'Asia/Kathmandu', 'Australia/Lord_Howe', 'Pacific/Apia', 'America/Sao_Paulo']

describe('insight buckets on SQLite', () => {
  test('day, Monday week and month keys from the shifted wall time', () => {
    const db = new Database(':memory:')
    db.run('CREATE TABLE events (timestamp INTEGER NOT NULL)')
    for (const timezone of ZONES) {
      const range = resolveDateRange({ date_from: '2011-01-01', date_to: '2024-12-31' }, { now: Date.now(), timezone, interval: 'day' })
      const days = buckets(range, 'day', { timezone })
      const weeks = buckets(range, 'week', { timezone, weekStartDay: 1 })
      const months = buckets(range, 'month', { timezone })
      const spans = offsetTransitions(timezone, range.from, range.to)
      db.run('DELETE FROM events')
      const insert = db.prepare('INSERT INTO events (timestamp) VALUES (?)')
      const instants = Array.from({ length: 1000 }, () => Math.floor(range.from + Math.random() * (range.to - range.from)))
      for (const span of spans.slice(1)) instants.push(span.fromUtc - 1, span.fromUtc)
      for (const t of instants) insert.run(t)
      const offset = spans.length === 1 ? String(spans[0].offsetMs) : `CASE ${spans.slice(1).map((s, i) => `WHEN timestamp < ${s.fromUtc} THEN ${spans[i].offsetMs}`).join(' ')} ELSE ${spans[spans.length - 1].offsetMs} END`
      const wall = `(timestamp + ${offset}) / 1000`
      const rows = db
        .query(`SELECT timestamp AS t,
                  CAST(strftime('%s', ${wall}, 'unixepoch', 'start of day') AS INTEGER) * 1000 AS day,
                  CAST(strftime('%s', ${wall}, 'unixepoch', 'start of day', '-6 days', 'weekday 1') AS INTEGER) * 1000 AS week,
                  CAST(strftime('%s', ${wall}, 'unixepoch', 'start of month') AS INTEGER) * 1000 AS month
                FROM events`)
        .all() as { t: number; day: number; week: number; month: number }[]
      expect(rows).toHaveLength(instants.length)
      for (const row of rows) {
        expect([timezone, row.t, bucketIndexOfWall(days, row.day)]).toEqual([timezone, row.t, bucketIndexAt(days, row.t)])
        expect(bucketIndexOfWall(weeks, row.week)).toBe(bucketIndexAt(weeks, row.t))
        expect(bucketIndexOfWall(months, row.month)).toBe(bucketIndexAt(months, row.t))
      }
    }
    db.close()
  })
})
