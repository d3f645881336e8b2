// The embedded install move.test.ts and bench/move.ts move: made through the API of a real service (flags with
// history, a cohort, persons, keys, an insight, a dashboard, a recording), then many events written straight into
// its stopped DuckDB file (the API would take minutes for a million). And the insights compared on both sides.
import { expect } from 'bun:test'
import { Database } from 'bun:sqlite'
import { eventually } from '../chaos/load'
import { PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

export const DAY = 86_400_000
const USERS = 500

export interface SourceFacts {
  /** events in the store */
  events: number
  flagId: number
  /** a personal key made through the API (kept by the move) */
  personalKey: string
}

const api = async (url: string, path: string, method = 'GET', json?: unknown) => {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
    body: json === undefined ? undefined : JSON.stringify(json),
  })
  const body = (await r.json().catch(() => null)) as any
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(body)}`)
  return body
}

export async function buildSource(url: string): Promise<SourceFacts> {
  const flag = await api(url, '/api/projects/@current/feature_flags/', 'POST', { key: 'moved-flag', filters: { groups: [{ rollout_percentage: 50 }] } })
  await api(url, `/api/projects/@current/feature_flags/${flag.id}/`, 'PATCH', { filters: { groups: [{ rollout_percentage: 100 }] } })
  await api(url, '/api/projects/@current/cohorts/', 'POST', { name: 'Pro users', groups: [{ properties: [{ key: 'plan', value: 'pro', type: 'person' }] }] })
  const insight = await api(url, '/api/projects/@current/insights/', 'POST', {
    name: 'Pageviews',
    query: { kind: 'InsightVizNode', source: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }] } },
  })
  const dashboard = await api(url, '/api/projects/@current/dashboards/', 'POST', { name: 'Moved dashboard' })
  await api(url, `/api/projects/@current/insights/${insight.id}/`, 'PATCH', { dashboards: [dashboard.id] }).catch(() => undefined)
  const key = await api(url, '/api/personal_api_keys/', 'POST', { label: 'made before the move', scopes: ['*'] })
  // persons: 50 identified users with a plan, so that unique users resolve through the person mapping
  const now = Date.now()
  const batch = Array.from({ length: 50 }, (_, i) => ({
    event: '$identify',
    distinct_id: `user-${i}`,
    timestamp: new Date(now - 15 * DAY).toISOString(),
    properties: { $anon_distinct_id: `anon-${i}`, $set: { plan: i % 2 ? 'pro' : 'free' } },
  }))
  const r = await fetch(`${url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) })
  expect(r.status).toBe(200)
  const replay = await fetch(`${url}/s/`, {
    method: 'POST',
    body: JSON.stringify([{
      event: '$snapshot',
      properties: {
        $session_id: 'moved-session', $window_id: 'w-1', distinct_id: 'user-1', token: PROJECT_KEY,
        $snapshot_data: [
          { type: 4, data: { href: 'https://shop.example/', width: 1280, height: 720 }, timestamp: now - 2000 },
          { type: 3, data: { source: 2, type: 2, id: 5, x: 1, y: 2 }, timestamp: now - 1000 },
        ],
      },
    }]),
  })
  expect(replay.status).toBe(200)
  expect(await eventually(async () => (await api(url, '/api/projects/@current/persons/?limit=100')).results.length >= 50, 30_000)).toBe(true)
  expect(await eventually(async () => (await api(url, '/api/projects/1/session_recordings/')).results.length === 1, 30_000)).toBe(true)
  return { events: batch.length, flagId: flag.id, personalKey: key.value }
}

/**
 * `n` events over 14 days from `from`, written into the stopped service's DuckDB file in one statement: $pageview,
 * signup and purchase in turn, by `USERS` distinct ids (those of the identified persons among them).
 */
export async function addEvents(file: string, n: number, from: number): Promise<number> {
  if (file.endsWith('.sqlite')) return addSqliteEvents(file, n, from)
  const { DuckDBInstance } = await import('@duckdb/node-api')
  const instance = await DuckDBInstance.create(file)
  try {
    const c = await instance.connect()
    const step = Math.floor((14 * DAY) / n)
    await c.run(`INSERT INTO events
      SELECT uuid()::VARCHAR, 1,
             CASE i % 3 WHEN 0 THEN '$pageview' WHEN 1 THEN 'signup' ELSE 'purchase' END,
             'user-' || (i % ${USERS}),
             '{"$browser":"' || CASE i % 2 WHEN 0 THEN 'Chrome' ELSE 'Firefox' END || '","n":' || (i % 7) || '}',
             ${from} + i * ${step}, ${from} + i * ${step} + 5, NULL
        FROM range(${n}) t(i)`)
    c.closeSync()
  } finally {
    instance.closeSync()
  }
  return n
}

/** The same events into a stopped service's SQLite file (EMBEDDED_EVENT_STORE=sqlite). */
function addSqliteEvents(file: string, n: number, from: number): number {
  const db = new Database(file)
  try {
    const step = Math.floor((14 * DAY) / n)
    db.run(`WITH RECURSIVE r(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM r WHERE i < ${n - 1}),
      u(i, h) AS (SELECT i, lower(hex(randomblob(16))) FROM r)
      INSERT INTO events (uuid, team_id, event, distinct_id, properties, timestamp, created_at, person_id)
      SELECT substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-a' || substr(h, 18, 3) || '-' || substr(h, 21, 12), 1,
             CASE i % 3 WHEN 0 THEN '$pageview' WHEN 1 THEN 'signup' ELSE 'purchase' END,
             'user-' || (i % ${USERS}),
             '{"$browser":"' || CASE i % 2 WHEN 0 THEN 'Chrome' ELSE 'Firefox' END || '","n":' || (i % 7) || '}',
             ${from} + i * ${step}, ${from} + i * ${step} + 5, NULL
        FROM u`)
  } finally {
    db.close()
  }
  return n
}

/** Trends (count by day), unique users by day and a funnel over the 14 days, once all `events` are readable. */
export async function insightAnswers(url: string, events: number, like?: unknown): Promise<unknown> {
  const query = async (q: Record<string, unknown>) => api(url, '/api/projects/1/query/', 'POST', { query: q, refresh: 'force_blocking' })
  const counted = await eventually(async () => {
    const body = await query({ kind: 'HogQLQuery', query: 'SELECT count() FROM events' }).catch(() => null)
    return body?.results?.[0]?.[0] === events
  }, 60_000, 250)
  expect(counted).toBe(true)
  // the person mapping may still be on its way to a service just started: asked again until the answers match
  const deadline = Date.now() + 30_000
  for (;;) {
    const answers = await answersNow(query)
    if (like === undefined || Date.now() > deadline || Bun.deepEquals(answers, like)) return answers
    await Bun.sleep(500)
  }
}

async function answersNow(query: (q: Record<string, unknown>) => Promise<any>) {
  const dateRange = { date_from: '-15d' }
  const trends = await query({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signup' }], dateRange })
  const users = await query({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], dateRange, breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } })
  const funnel = await query({ kind: 'FunnelsQuery', series: [{ kind: 'EventsNode', event: '$pageview' }, { kind: 'EventsNode', event: 'signup' }, { kind: 'EventsNode', event: 'purchase' }], dateRange })
  const totals = await query({ kind: 'HogQLQuery', query: 'SELECT event, count(), count(DISTINCT person_id) FROM events GROUP BY event ORDER BY event' })
  return {
    trends: trends.results.map((r: { data: number[] }) => r.data),
    users: users.results.map((r: { breakdown_value: unknown; data: number[] }) => [r.breakdown_value, r.data]),
    funnel: (funnel.results as { count: number }[]).map((s) => s.count),
    totals: totals.results,
  }
}
