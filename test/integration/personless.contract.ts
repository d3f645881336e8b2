// Personless visitors (posthog-js at its defaults: anonymous visitors' events carry `$process_person_profile:
// false`) counted as PostHog counts them, on every store (personless.*.test.ts): each distinct id with no person is
// one person whose id is PostHog's deterministic uuid for it, so unique users (trends `dau`), HogQL
// `count(DISTINCT person_id)` and funnels agree; the persons API does not list them; an $identify or an alias that
// gives such an id a person later moves its past events to that person.
//
// The questions are asked through a driver: the HTTP API of a running stack (stackDriver), or the services over a
// store filled directly (the modern engine's test, which has no server).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { personUuid } from '../../src/people/identity'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

export interface CapturedEvent {
  event: string
  distinctId: string
  timestamp: string
  properties: Record<string, unknown>
}

export interface PersonlessDriver {
  teamId: number
  /** capture these events and wait until they are stored and learned */
  capture(events: CapturedEvent[]): Promise<void>
  hogql(query: string): Promise<unknown[][]>
  /** an insight's results */
  insight(query: Record<string, unknown>): Promise<any>
  /** the persons API's list (of a distinct id when given) */
  persons(distinctId?: string): Promise<{ count: number; results: { uuid: string; distinct_ids: string[] }[] }>
  close(): Promise<void>
}

const ev = (event: string, distinctId: string, timestamp: string, properties: Record<string, unknown> = {}): CapturedEvent => ({ event, distinctId, timestamp, properties })
/** what posthog-js sends for an anonymous visitor when `person_profiles` is "identified_only" (its default) */
const anon = (event: string, distinctId: string, timestamp: string) => ev(event, distinctId, timestamp, { $process_person_profile: false, $is_identified: false })

// Two days: five anonymous visitors (never a person row), one identified user
export const BEFORE = [
  anon('$pageview', 'anon-1', '2024-05-06T10:00:00Z'),
  anon('signup', 'anon-1', '2024-05-06T10:05:00Z'),
  anon('$pageview', 'anon-1', '2024-05-07T09:00:00Z'),
  anon('$pageview', 'anon-2', '2024-05-06T11:00:00Z'),
  anon('signup', 'anon-2', '2024-05-06T11:30:00Z'),
  anon('$pageview', 'anon-3', '2024-05-06T12:00:00Z'),
  ev('$pageview', 'user-4', '2024-05-06T13:00:00Z', { $set: { email: 'four@example.com' } }),
  anon('$pageview', 'anon-5', '2024-05-06T14:00:00Z'),
  anon('$pageview', 'anon-5', '2024-05-06T14:10:00Z'),
  anon('$pageview', 'anon-6', '2024-05-07T10:00:00Z'),
]
// then anon-5 signs in as user-5, and user-4 is given anon-6 as an alias
export const AFTER = [
  ev('$identify', 'user-5', '2024-05-07T12:00:00Z', { $anon_distinct_id: 'anon-5', $set: { email: 'five@example.com' } }),
  ev('$pageview', 'user-5', '2024-05-07T12:05:00Z'),
  ev('$create_alias', 'user-4', '2024-05-07T13:00:00Z', { alias: 'anon-6' }),
]

const RANGE = { date_from: '2024-05-06', date_to: '2024-05-07' }
const pageviews = { kind: 'EventsNode', event: '$pageview' }
const FUNNEL = { kind: 'FunnelsQuery', series: [pageviews, { kind: 'EventsNode', event: 'signup' }], dateRange: RANGE }

/** Ask until `done` holds (the mapping is copied where the events are every half second). */
async function until(what: string, done: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await done().catch(() => false)) return
    await Bun.sleep(100)
  }
  throw new Error(`not in time: ${what}`)
}

export function personlessContract(name: string, start: () => Promise<PersonlessDriver>): void {
  describe(`personless visitors: ${name}`, () => {
    let d: PersonlessDriver
    const dau = async (extra: Record<string, unknown> = {}) => (await d.insight({ kind: 'TrendsQuery', series: [{ ...pageviews, math: 'dau' }], dateRange: RANGE, ...extra }))[0]
    const funnel = async () => ((await d.insight(FUNNEL)) as { count: number }[]).map((s) => s.count)
    const personOf = async (distinctIds: string[]) => d.hogql(`SELECT DISTINCT person_id FROM events WHERE distinct_id IN (${distinctIds.map((id) => `'${id}'`).join(', ')})`)

    beforeAll(async () => {
      d = await start()
      await d.capture(BEFORE)
      await until('every event has a person', async () => {
        const [[total, unmapped]] = await d.hogql('SELECT count(), sum(if(person_id IS NULL, 1, 0)) FROM events')
        return total === BEFORE.length && unmapped === 0
      })
    }, 180_000)
    afterAll(() => d?.close())

    test('each anonymous visitor is one person, with the deterministic uuid of its distinct id', async () => {
      expect(await d.hogql('SELECT count(DISTINCT person_id), count(DISTINCT distinct_id) FROM events')).toEqual([[6, 6]])
      const rows = await d.hogql('SELECT distinct_id, person_id FROM events GROUP BY distinct_id, person_id ORDER BY distinct_id')
      expect(rows).toEqual(['anon-1', 'anon-2', 'anon-3', 'anon-5', 'anon-6', 'user-4'].map((id) => [id, personUuid(d.teamId, id)]))
    })

    test('unique users count them, as funnels do', async () => {
      // 6 May: anon-1, anon-2, anon-3, user-4, anon-5; 7 May: anon-1, anon-6
      expect((await dau()).data).toEqual([5, 2])
      expect((await dau({ trendsFilter: { display: 'BoldNumber' } })).aggregated_value).toBe(6)
      expect(await funnel()).toEqual([6, 2])
    })

    test('the persons API lists persons only: no personless visitor', async () => {
      const all = await d.persons()
      expect(all.count).toBe(1)
      expect(all.results.map((p) => p.distinct_ids)).toEqual([['user-4']])
      expect((await d.persons('anon-1')).results).toEqual([])
    })

    test('an $identify or an alias of a personless id moves its past events to the identified person', async () => {
      await d.capture(AFTER)
      const [five] = (await d.persons('user-5')).results
      expect(five).toBeDefined()
      expect(five.distinct_ids.sort()).toEqual(['anon-5', 'user-5'])
      const [four] = (await d.persons('user-4')).results
      expect(four.distinct_ids.sort()).toEqual(['anon-6', 'user-4'])
      await until('anon-5 and anon-6 re-pointed', async () => (await personOf(['anon-5', 'user-5'])).length === 1 && (await personOf(['anon-6', 'user-4'])).length === 1)
      expect(await personOf(['anon-5', 'user-5'])).toEqual([[five.uuid]])
      expect(await personOf(['anon-6', 'user-4'])).toEqual([[four.uuid]])
      // anon-5's events of the day before are user-5's now; the others keep their own
      expect(await d.hogql("SELECT person_id, count() FROM events WHERE distinct_id = 'anon-5' GROUP BY person_id")).toEqual([[five.uuid, 2]])
      expect(await personOf(['anon-1'])).toEqual([[personUuid(d.teamId, 'anon-1')]])
      expect(await d.hogql('SELECT count(DISTINCT person_id), count(DISTINCT distinct_id) FROM events')).toEqual([[5, 7]])
      // 6 May: anon-1, anon-2, anon-3, user-4, user-5 (was anon-5); 7 May: anon-1, user-4 (was anon-6), user-5
      expect((await dau()).data).toEqual([5, 3])
      expect((await dau({ trendsFilter: { display: 'BoldNumber' } })).aggregated_value).toBe(5)
      expect(await funnel()).toEqual([5, 2])
      expect((await d.persons()).count).toBe(2)
    })
  })
}

/** The driver over a running stack's HTTP API (project 1). */
export async function stackDriver(start: () => Promise<Stack>): Promise<PersonlessDriver> {
  const stack = await start()
  const ok = async (r: Response) => {
    const body = await json(r)
    if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`)
    return body
  }
  const query = async (q: Record<string, unknown>) => ok(await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: q, refresh: 'force_blocking' } }))
  return {
    teamId: 1,
    async capture(events) {
      const batch = events.map((e) => ({ event: e.event, timestamp: e.timestamp, properties: { distinct_id: e.distinctId, ...e.properties } }))
      const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))
      expect(r.status).toBe(200)
      await learned(stack)
    },
    hogql: async (text) => (await query({ kind: 'HogQLQuery', query: text })).results,
    insight: async (q) => (await query(q)).results,
    persons: async (distinctId) => ok(await stack.api(`/api/projects/1/persons/${distinctId === undefined ? '' : `?distinct_id=${encodeURIComponent(distinctId)}`}`)),
    close: () => stack.close(),
  }
}
