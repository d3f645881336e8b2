// Retention over 30,000 persons on an embedded store (insights-retention.*.test.ts seed it their own way): the rows
// come in several pages of whole persons, and the table is the one worked out here.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { StoredEvent } from '../../src/events/store'
import { MAX_HOGQL_ECHO_CHARS } from '../../src/insights/service'
import type { MappingRow } from '../../src/query/person-mapping'
import { json, type Stack } from '../helpers/stack'

const PERSONS = 30_000
const DAYS = 6
const DAY0 = Date.UTC(2024, 4, 6)
/** whether person p had a pageview on day d (about two days in three) */
const active = (p: number, d: number) => (p * 7 + d * 3) % 3 !== 0 || (p + d) % 5 === 0

export function retentionOverManyPersons(name: string, start: () => Promise<Stack>, seed: (stack: Stack, events: StoredEvent[], mapping: MappingRow[]) => Promise<void>): void {
  describe(`retention over 30,000 persons: ${name}`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await start()
      const events: StoredEvent[] = []
      // queries read person_id through the distinct-id mapping the store keeps (copied from Postgres)
      const mapping: MappingRow[] = []
      for (let p = 0; p < PERSONS; p++) {
        const person = `00000000-0000-4000-8000-${String(p).padStart(12, '0')}`
        mapping.push({ teamId: 1, distinctId: `d-${p}`, personId: person, version: 1 })
        for (let d = 0; d < DAYS; d++) {
          if (active(p, d)) events.push({ uuid: crypto.randomUUID(), teamId: 1, event: '$pageview', distinctId: `d-${p}`, properties: '{}', timestamp: DAY0 + d * 86_400_000 + (p % 86_400) * 1000, createdAt: DAY0, personId: person })
        }
      }
      await seed(stack, events, mapping)
    }, 120_000)
    afterAll(() => stack?.close())

    test('several pages, the same table as counted by hand', async () => {
      const started = performance.now()
      const r = await stack.api('/api/projects/1/query/', {
        method: 'POST',
        json: { query: { kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: DAYS }, dateRange: { date_from: '2024-05-06', date_to: '2024-05-11' } } },
      })
      const body = await json(r)
      const ms = performance.now() - started
      expect(r.status).toBe(200)
      const expected = Array.from({ length: DAYS }, (_, i) =>
        Array.from({ length: DAYS }, (_, k) => {
          let n = 0
          for (let p = 0; p < PERSONS; p++) if (i + k < DAYS && active(p, i) && active(p, i + k)) n++
          return n
        }),
      )
      expect(body.results.map((row: { values: { count: number }[] }) => row.values.map((v) => v.count))).toEqual(expected)
      const pages = String(body.hogql).split('ORDER BY person_id, period').length - 1
      console.log(`retention of ${PERSONS} persons × ${DAYS} days (${expected.reduce((a, row) => a + row[0], 0)} person-days) in ${pages} pages: ${ms.toFixed(0)} ms`)
      expect(pages).toBeGreaterThanOrEqual(3)

      // first time: each person once, in the cohort of their first active day (lookups of 2,000 persons a statement)
      const firstStarted = performance.now()
      const first = await json(
        stack.api('/api/projects/1/query/', {
          method: 'POST',
          json: { query: { kind: 'RetentionQuery', retentionFilter: { period: 'Day', totalIntervals: DAYS, retentionType: 'retention_first_time' }, dateRange: { date_from: '2024-05-06', date_to: '2024-05-11' } } },
        }),
      )
      const firstDay = (p: number) => [...Array(DAYS).keys()].find((d) => active(p, d)) ?? -1
      const expectedFirst = Array.from({ length: DAYS }, (_, i) =>
        Array.from({ length: DAYS }, (_, k) => {
          let n = 0
          for (let p = 0; p < PERSONS; p++) if (i + k < DAYS && firstDay(p) === i && active(p, i + k)) n++
          return n
        }),
      )
      expect(first.results.map((row: { values: { count: number }[] }) => row.values.map((v) => v.count))).toEqual(expectedFirst)
      // the statements are echoed in `hogql` up to its bound: 16 lookups naming 2,000 persons each would be 1.2 MB
      expect(first.hogql.length).toBeLessThan(MAX_HOGQL_ECHO_CHARS + 100_000)
      expect(first.hogql).toMatch(/-- and \d+ more statements like these$/)
      console.log(`first-time retention of the same: ${(performance.now() - firstStarted).toFixed(0)} ms; hogql echo ${first.hogql.length} characters (${first.hogql.match(/and (\d+) more/)?.[1]} statements left out)`)
    }, 120_000)
  })
}
