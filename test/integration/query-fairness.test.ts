// Query slots are shared fairly between projects (embedded store, 2 slots): a project that sends three heavy
// queries holds one slot and waits for the others, and another project's count answers at once. Before, the slots
// were taken first come, first served: a 5 ms count waited 7–9 s behind another tenant's queries. Clients that
// hang up are answered 499 client_closed, counted, and are not errors.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createProject } from '../../src/projects/repository'
import { BASE, embeddedEvents, json, PERSONAL_KEY, startStack, type Stack } from '../helpers/stack'

const ROWS = 300_000
// a product of the events with themselves through a subquery: minutes of work
const HEAVY = "SELECT count(DISTINCT concat(a, b)) FROM (SELECT concat(properties, toString(timestamp)) AS a, lower(concat(distinct_id, properties)) AS b FROM events WHERE properties.a LIKE '%1%' ORDER BY a DESC, b)"

describe('query API: slots shared fairly between projects', () => {
  let stack: Stack
  let other: number
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20, QUERY_TIMEOUT_MS: 120_000 })
    other = (await createProject(stack.services.db.sql, { name: 'Quick', token: 'phc_query_fairness_quick_01' })).id
    const db = await embeddedEvents(stack)
    const insert = db.prepare('INSERT INTO events (uuid, team_id, event, distinct_id, properties, timestamp, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
    const now = Date.now()
    db.transaction(() => {
      for (let i = 0; i < ROWS; i++) insert.run(crypto.randomUUID(), 1, `event-${i % 50}`, `user-${i % 3000}`, JSON.stringify({ a: `value-${i}` }), now - i * 1000, now)
      for (let i = 0; i < 25; i++) insert.run(crypto.randomUUID(), other, 'quick', `q-${i}`, '{}', now - i * 1000, now)
    })()
    db.close()
  }, 120_000)
  afterAll(() => stack?.close())

  const post = (project: number, query: string, signal?: AbortSignal) =>
    stack.app.handle(
      new Request(`${BASE}/api/projects/${project}/query/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: { kind: 'HogQLQuery', query } }),
        signal,
      }),
    )
  const metric = async (name: string) => {
    const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
    return Number(new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\d+)`, 'm').exec(text)?.[1] ?? 0)
  }

  test('one project’s heavy queries hold half the slots; another project’s count answers at once; clients that leave are 499', async () => {
    const clients = [new AbortController(), new AbortController(), new AbortController()]
    const heavy = clients.map((c) => post(1, HEAVY, c.signal))
    for (let i = 0; i < 200 && (await stack.services.analytics.slotUse()).waiting < 2; i++) await Bun.sleep(10)
    expect(await stack.services.analytics.slotUse()).toEqual({ running: 1, waiting: 2 }) // project 1: one slot, two waiting
    const started = performance.now()
    const quick = await post(other, 'SELECT count() FROM events')
    const took = performance.now() - started
    console.log(`project ${other}'s count: ${took.toFixed(0)} ms while project 1 has 3 heavy queries (1 running, 2 waiting)`)
    expect(quick.status).toBe(200)
    expect((await json(quick)).results).toEqual([[25]])
    expect(took).toBeLessThan(20_000) // generous: it is not behind project 1's minutes of work
    for (const c of clients) c.abort()
    const answers = await Promise.all(heavy)
    expect(answers.map((r) => r.status)).toEqual([499, 499, 499])
    expect(await json(answers[0]!)).toMatchObject({ code: 'client_closed' })
    for (let i = 0; i < 100 && (await stack.services.analytics.slotUse()).running > 0; i++) await Bun.sleep(20)
    expect(await stack.services.analytics.slotUse()).toEqual({ running: 0, waiting: 0 })
    expect(await metric('query_requests_total{outcome="client_closed"}')).toBe(3)
    expect(await metric('query_requests_total{outcome="ok"}')).toBe(1)
  }, 60_000)
})
