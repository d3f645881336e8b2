// LifecycleQuery through POST /api/projects/:id/query/ on every store (insights-lifecycle.*.test.ts): statuses worked
// out by hand for persons new, returning, resurrecting and dormant over local days, weeks (Sunday and Monday) and
// months in New York (the same events in UTC give other days), a person merged mid-range (one person from the
// start, created when the first of the two was), personless events left out, paging, the row cap, refusals, and a
// lifecycle over `all` on a project whose events lie five years apart: answered within the bucket budget, refused
// past it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { lifecycleRunner, personCreation } from '../../src/insights/lifecycle'
import { InsightsService } from '../../src/insights/service'
import { createProject } from '../../src/projects/repository'
import { BASE, json, learned, type Stack } from '../helpers/stack'

const ev = (event: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}) => ({
  event, timestamp, properties: { distinct_id: distinctId, ...properties },
})
const personless = { $process_person_profile: false }

/**
 * A New York project (EDT, UTC-4), in time order (a person is created by their first event, at its time). The
 * comments give local times; the UTC days of bob's Jun 2 22:00 and alice's Jun 6 23:30 are the next ones.
 */
export const LIFECYCLE_EVENTS = [
  ev('$pageview', 'frank', '2024-04-15T16:00:00Z'), // Apr 15 12:00
  ev('$pageview', 'bob', '2024-05-20T16:00:00Z'), // May 20 12:00 (a Monday)
  ev('$pageview', 'carol', '2024-06-02T16:00:00Z'), // Jun 2 12:00 (a Sunday)
  ev('$pageview', 'bob', '2024-06-03T02:00:00Z'), // Jun 2 22:00
  ev('$pageview', 'bob', '2024-06-03T13:00:00Z'), // Jun 3 09:00
  ev('$pageview', 'alice', '2024-06-03T14:00:00Z'), // Jun 3 10:00
  ev('$pageview', 'anon-e', '2024-06-04T00:00:00Z', personless), // Jun 3 20:00, an anonymous visitor
  ev('$pageview', 'anon-d', '2024-06-04T12:00:00Z'), // Jun 4 08:00
  ev('$pageview', 'alice', '2024-06-04T14:00:00Z'), // Jun 4 10:00
  ev('$pageview', 'alice', '2024-06-04T15:00:00Z'), // Jun 4 11:00
  ev('$pageview', 'anon-e', '2024-06-05T00:00:00Z', personless), // Jun 4 20:00
  ev('$pageview', 'user-d', '2024-06-05T14:00:00Z'), // Jun 5 10:00: a second person…
  ev('$identify', 'user-d', '2024-06-05T14:05:00Z', { $anon_distinct_id: 'anon-d' }), // …merged with anon-d's
  ev('$pageview', 'alice', '2024-06-05T16:00:00Z', personless), // Jun 5 12:00, sent without a person profile
  ev('$pageview', 'bob', '2024-06-05T16:00:00Z'), // Jun 5 12:00
  ev('$pageview', 'user-d', '2024-06-06T14:00:00Z'), // Jun 6 10:00
  ev('$pageview', 'alice', '2024-06-07T03:30:00Z'), // Jun 6 23:30
  ev('$pageview', 'bob', '2024-06-10T16:00:00Z'), // Jun 10 12:00
  ev('$pageview', 'frank', '2024-06-20T16:00:00Z'), // Jun 20 12:00
]
/** The persons behind the events (anon-d and user-d are one; anon-e has none). */
export const LIFECYCLE_PERSONS = ['frank', 'bob', 'carol', 'alice', 'user-d']

/** A UTC project whose events lie five years apart. */
export const FIVE_YEAR_EVENTS = [
  ev('$pageview', 'old', '2019-06-01T12:00:00Z'),
  ev('$pageview', 'recent', '2024-05-31T12:00:00Z'),
  ev('$pageview', 'old', '2024-06-01T12:00:00Z'),
]
const DAY_MS = 86_400_000
/** Days 2019-06-01 … 2024-06-01 (two leap days between). */
export const FIVE_YEAR_DAYS = (Date.UTC(2024, 5, 1) - Date.UTC(2019, 5, 1)) / DAY_MS + 1

type Counts = { new: number[]; returning: number[]; resurrecting: number[]; dormant: number[] }

/**
 * Worked out by hand, person by person (status per period; the window starts one period before the range):
 * - alice (created Jun 3): Jun 3 new, Jun 4 returning, Jun 5 dormant (her Jun 5 event has no person profile),
 *   Jun 6 resurrecting, Jun 7 dormant;
 * - bob (created May 20): Jun 2 (before the range) resurrecting, Jun 3 returning, Jun 4 dormant, Jun 5
 *   resurrecting, Jun 6 dormant;
 * - carol (created Jun 2): new on Jun 2, before the range; Jun 3 dormant;
 * - anon-d + user-d, one person created when anon-d was (Jun 4): Jun 4 new, Jun 5 and 6 returning, Jun 7 dormant
 *   (unmerged they would be two persons: anon-d new on Jun 4 and dormant on Jun 5, user-d new on Jun 5);
 * - anon-e: no person, not counted; frank: nothing in these days.
 */
export const EXPECTED: Record<'newYorkDays' | 'utcDays' | 'sundayWeeks' | 'mondayWeeks' | 'months', Counts> = {
  newYorkDays: { new: [1, 1, 0, 0, 0], returning: [1, 1, 1, 1, 0], resurrecting: [0, 0, 1, 1, 0], dormant: [-1, -1, -1, -1, -2] },
  // UTC: bob's first event of the window is on Jun 3 (resurrecting), alice's last on Jun 7 (resurrecting)
  utcDays: { new: [1, 1, 0, 0, 0], returning: [0, 1, 1, 1, 0], resurrecting: [1, 0, 1, 0, 1], dormant: [-1, -1, -1, -1, -1] },
  // weeks of May 26, Jun 2, Jun 9: bob active the week before the range, not in its first (dormant), back in the
  // second (resurrecting) and third (returning); alice, carol and the merged person new in the second
  sundayWeeks: { new: [0, 3, 0], returning: [0, 0, 1], resurrecting: [0, 1, 0], dormant: [-1, 0, -3] },
  // weeks of May 27, Jun 3, Jun 10: bob's Sunday Jun 2 falls in the first, carol (Jun 2) is new there
  mondayWeeks: { new: [1, 2, 0], returning: [1, 1, 1], resurrecting: [0, 0, 0], dormant: [0, -1, -2] },
  // May, June: bob new in May; frank (created in April, back on Jun 20) dormant in May, resurrecting in June
  months: { new: [1, 3], returning: [0, 1], resurrecting: [0, 1], dormant: [-1, 0] },
}

type Result = { status: string; data: number[]; count: number; label: string; days: string[]; labels: string[]; action: Record<string, unknown> }
export const byStatus = (body: { results: Result[] }): Counts =>
  Object.fromEntries(body.results.map((r) => [r.status, r.data])) as Counts

export const NY_DAYS = { date_from: '2024-06-03', date_to: '2024-06-07' }
export const SUNDAY_WEEKS = { date_from: '2024-05-26', date_to: '2024-06-15' }
export const MONDAY_WEEKS = { date_from: '2024-05-27', date_to: '2024-06-16' }
export const MONTHS = { date_from: '2024-05-01', date_to: '2024-06-30' }
export const ALL_FIVE_YEARS = { date_from: 'all', date_to: '2024-06-01' }

/** The five-year project's answer: old new on the first day and dormant on the second, back on the last day. */
export function expectFiveYears(body: { results: Result[]; hogql?: string }): void {
  const counts = byStatus(body)
  const zeros = () => new Array<number>(FIVE_YEAR_DAYS).fill(0)
  const at = (entries: [number, number][]) => {
    const data = zeros()
    for (const [i, v] of entries) data[i] = v
    return data
  }
  expect(body.results[0].days).toHaveLength(FIVE_YEAR_DAYS)
  expect([body.results[0].days[0], body.results[0].days[FIVE_YEAR_DAYS - 1]]).toEqual(['2019-06-01', '2024-06-01'])
  expect(counts.new).toEqual(at([[0, 1], [FIVE_YEAR_DAYS - 2, 1]]))
  expect(counts.returning).toEqual(zeros())
  expect(counts.resurrecting).toEqual(at([[FIVE_YEAR_DAYS - 1, 1]]))
  expect(counts.dormant).toEqual(at([[1, -1], [FIVE_YEAR_DAYS - 1, -1]]))
}

/** A project of its own with these events, its timezone set, once its events are stored and their persons mapped. */
export async function seededProject(stack: Stack, name: string, token: string, timezone: string, events: ReturnType<typeof ev>[], persons: number): Promise<number> {
  const id = (await createProject(stack.services.db.sql, { name, token })).id
  await stack.services.tokens.invalidate()
  const patched = await stack.api(`/api/projects/${id}/`, { method: 'PATCH', json: { timezone } })
  expect(patched.status).toBe(200)
  const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: token, batch: events }) }))
  expect(r.status).toBe(200)
  await learned(stack)
  const personal = events.filter((e) => e.properties.distinct_id !== 'anon-e')
  const query = `SELECT count(), count(DISTINCT person_id) FROM events WHERE distinct_id != 'anon-e'`
  // the person mapping is copied from Postgres every half second; merged ids are one person once copied
  for (let i = 0; i < 300; i++) {
    const answer = await stack.api(`/api/projects/${id}/query/`, { method: 'POST', json: { query: { kind: 'HogQLQuery', query } } })
    const body = await json(answer)
    if (answer.status !== 200) throw new Error(`${name}: ${answer.status} ${JSON.stringify(body)}`)
    const [[count, distinct]] = body.results as number[][]
    if (count === personal.length && distinct === persons) return id
    await Bun.sleep(100)
  }
  throw new Error(`${name}: events or persons not in place`)
}

export function lifecycleContract(name: string, start: () => Promise<Stack>): void {
  describe(`lifecycle: ${name}`, () => {
    let stack: Stack
    let project: number
    let fiveYears: number
    const post = (node: Record<string, unknown>, id = project, refresh: unknown = 'force_blocking') =>
      stack.api(`/api/projects/${id}/query/`, { method: 'POST', json: { query: node, refresh } })
    const answer = async (node: Record<string, unknown>, id = project, refresh?: unknown) => {
      const r = await post(node, id, refresh)
      const body = await json(r)
      if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`)
      return body
    }
    const lifecycle = (extra: Record<string, unknown>, id = project, refresh?: unknown) =>
      answer({ kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], ...extra }, id, refresh)
    const patch = async (id: number, json: Record<string, unknown>) => {
      const r = await stack.api(`/api/projects/${id}/`, { method: 'PATCH', json })
      expect(r.status).toBe(200)
    }

    beforeAll(async () => {
      const started = performance.now()
      stack = await start()
      project = await seededProject(stack, 'Lifecycle', 'phc_lifecycle_new_york_0001', 'America/New_York', LIFECYCLE_EVENTS, LIFECYCLE_PERSONS.length)
      fiveYears = await seededProject(stack, 'Five years', 'phc_lifecycle_five_years_01', 'UTC', FIVE_YEAR_EVENTS, 2)
      console.log(`${name}: seeded and mapped in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    }, 120_000)
    afterAll(() => stack?.close())

    test('local days in New York: PostHog’s four series, dormant negative, the envelope', async () => {
      const body = await lifecycle({ dateRange: NY_DAYS, interval: 'day', lifecycleFilter: { toggledLifecycles: ['new', 'dormant'], showValuesOnSeries: true } })
      expect(body.results.map((r: Result) => r.status)).toEqual(['new', 'returning', 'resurrecting', 'dormant'])
      expect(byStatus(body)).toEqual(EXPECTED.newYorkDays)
      expect(body.results[3]).toEqual({
        action: { id: '$pageview', name: '$pageview', type: 'events', order: 0, math: 'total' },
        data: [-1, -1, -1, -1, -2],
        count: -6,
        labels: ['3-Jun-2024', '4-Jun-2024', '5-Jun-2024', '6-Jun-2024', '7-Jun-2024'],
        days: ['2024-06-03', '2024-06-04', '2024-06-05', '2024-06-06', '2024-06-07'],
        label: '$pageview - dormant',
        status: 'dormant',
      })
      expect(body).toMatchObject({
        timezone: 'America/New_York',
        is_cached: false,
        resolved_date_range: { date_from: '2024-06-03T00:00:00-04:00', date_to: '2024-06-07T23:59:59.999999-04:00' },
      })
      // one period before the range is read (for the first period's statuses), personless events are not
      expect(body.hogql).toContain('ORDER BY person_id, period')
      expect(body.hogql).toContain("toDateTime('2024-06-02T04:00:00.000Z')")
      expect(body.hogql).toContain('$process_person_profile')
      // asked again: from the cache
      expect((await lifecycle({ dateRange: NY_DAYS, interval: 'day', lifecycleFilter: { toggledLifecycles: ['new', 'dormant'], showValuesOnSeries: true } }, project, 'blocking')).is_cached).toBe(true)
    })

    test('the same events in UTC: other days, other statuses', async () => {
      await patch(project, { timezone: 'UTC' })
      try {
        expect(byStatus(await lifecycle({ dateRange: NY_DAYS }))).toEqual(EXPECTED.utcDays)
      } finally {
        await patch(project, { timezone: 'America/New_York' })
      }
    })

    test('weeks from Sunday, then from Monday; months; labels as trends’', async () => {
      const sunday = await lifecycle({ dateRange: SUNDAY_WEEKS, interval: 'week' })
      expect(byStatus(sunday)).toEqual(EXPECTED.sundayWeeks)
      expect(sunday.results[0].days).toEqual(['2024-05-26', '2024-06-02', '2024-06-09'])
      expect(sunday.results[0].labels).toEqual(['26 May–1 Jun', '2–8 Jun', '9–15 Jun'])
      await patch(project, { week_start_day: 1 })
      try {
        const monday = await lifecycle({ dateRange: MONDAY_WEEKS, interval: 'week' })
        expect(byStatus(monday)).toEqual(EXPECTED.mondayWeeks)
        expect(monday.results[0].days).toEqual(['2024-05-27', '2024-06-03', '2024-06-10'])
      } finally {
        await patch(project, { week_start_day: 0 })
      }
      const months = await lifecycle({ dateRange: MONTHS, interval: 'month' })
      expect(byStatus(months)).toEqual(EXPECTED.months)
      expect(months.results[0]).toMatchObject({ days: ['2024-05-01', '2024-06-01'], labels: ['May 2024', 'Jun 2024'] })
    })

    test('filters narrow the events; every event (null) and a custom name', async () => {
      const none = await lifecycle({ dateRange: NY_DAYS, series: [{ kind: 'EventsNode', event: '$pageview', properties: [{ key: '$browser', value: 'Netscape' }] }] })
      expect(byStatus(none)).toEqual({ new: [0, 0, 0, 0, 0], returning: [0, 0, 0, 0, 0], resurrecting: [0, 0, 0, 0, 0], dormant: [0, 0, 0, 0, 0] })
      // every event: the $identify falls on a day user-d was active anyway
      const all = await answer({ kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: null, custom_name: 'Anything' }], dateRange: NY_DAYS })
      expect(byStatus(all)).toEqual(EXPECTED.newYorkDays)
      expect(all.results[0]).toMatchObject({ label: 'All events - new', action: { id: null, name: 'All events', custom_name: 'Anything' } })
    })

    test('pages of whole persons give the same answer; past the row cap a 400 naming it', async () => {
      const node = { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: NY_DAYS }
      const ny = { id: project, timezone: 'America/New_York', weekStartDay: 0 }
      const persons = personCreation(stack.services.db.sql)
      const paged = new InsightsService(stack.services.query, { cacheTtlMs: 0, cacheMaxBytes: 0 }).register('LifecycleQuery', lifecycleRunner({ persons, pageRows: 4, maxRows: 100, timeoutMs: 30_000 }))
      const body = await paged.run(ny, node)
      expect(byStatus(body as never)).toEqual(EXPECTED.newYorkDays)
      // 10 rows (person × day) in pages of at most 4 whole persons: one statement per page
      expect(String(body.hogql).split('ORDER BY person_id, period').length - 1).toBeGreaterThanOrEqual(3)
      const capped = new InsightsService(stack.services.query, { cacheTtlMs: 0, cacheMaxBytes: 0 }).register('LifecycleQuery', lifecycleRunner({ persons, pageRows: 4, maxRows: 5, timeoutMs: 30_000 }))
      const error = await capped.run(ny, node).catch((e) => e)
      expect(error).toMatchObject({ status: 400, code: 'too_many_rows', attr: 'query__dateRange' })
    })

    test('hostile: `all` over events five years apart is one bounded statement; hours over it are refused', async () => {
      const started = performance.now()
      const body = await lifecycle({ dateRange: ALL_FIVE_YEARS, interval: 'day' }, fiveYears)
      const ms = performance.now() - started
      expectFiveYears(body)
      expect(body.resolved_date_range).toEqual({ date_from: '2019-06-01T00:00:00Z', date_to: '2024-06-01T23:59:59.999999Z' })
      // bounded in time (from the day before the first event) and in rows (one page)
      expect(body.hogql).toContain("timestamp >= toDateTime('2019-05-31T00:00:00.000Z')")
      expect(String(body.hogql).split('ORDER BY person_id, period').length - 1).toBe(1)
      // four series of 1,828 days: some 300 KB of JSON
      expect(JSON.stringify(body).length).toBeLessThan(512 * 1024)
      console.log(`${name}: a lifecycle over five years of days in ${ms.toFixed(0)} ms`)
      const hours = await post({ kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: ALL_FIVE_YEARS, interval: 'hour' }, fiveYears)
      expect(hours.status).toBe(400)
      expect(await json(hours)).toMatchObject({ type: 'validation_error', code: 'too_many_buckets', attr: 'interval' })
      // weeks and months over the same five years: a few hundred periods
      const weeks = await lifecycle({ dateRange: ALL_FIVE_YEARS, interval: 'week' }, fiveYears)
      expect(weeks.results[0].days.length).toBe(262)
      expect(byStatus(weeks).new.reduce((a: number, b: number) => a + b, 0)).toBe(2)
    })

    test('refusals name the member', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signup' }] }, 'query__series'],
        [{ series: [] }, 'query__series'],
        [{ surprise: 1 }, 'query__surprise'],
        [{ lifecycleFilter: { toggledLifecycles: ['zombie'] } }, 'query__lifecycleFilter'],
        [{ interval: 'minute' }, 'query__interval'],
        [{ dateRange: { date_from: 'yesterday-ish' } }, 'dateRange'],
      ]
      for (const [extra, attr] of cases) {
        const r = await post({ kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], ...extra })
        const body = await json(r)
        expect([JSON.stringify(extra), r.status, body.type, body.attr]).toEqual([JSON.stringify(extra), 400, 'validation_error', attr])
      }
    })
  })
}
