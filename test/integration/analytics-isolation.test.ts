// The hot path never waits for analytics: while one key holder reads the largest answers the caps allow — trends over
// all time with a 1,000-value breakdown (tens of MB), event lists of tens of MB, a flood of reads of a dashboard
// whose stored results weigh MBs, survey stats and error tracking's issue lists over two years, twenty of each at
// once — capture and /decide keep answering, each at once, and every one of those heavy
// requests gets an HTTP answer (never a connection closed without a status). Real service processes, on the
// embedded stores and on Postgres + ClickHouse 18.16. Before the analytics threads these answers were built, parsed
// and encoded on the serving thread and held capture and /decide for 2–10 s.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

// Generous for two shared cores running the attacker, the probe, the server and its stores; the stalls this test
// was written against lasted seconds.
const PROBE_WORST_MS = 1500
const PROBE_P99_MS = 500

const EVENTS = 20_000
const DAYS = 730
const VALUES = 1000
const PADDING = 'x'.repeat(1000)

const auth = { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' }

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0
}

/** Reads an answer's body chunk by chunk and drops it (the probe shares this thread: no 30 MB string is built). */
async function drain(response: Response): Promise<number> {
  let bytes = 0
  for await (const chunk of response.body as ReadableStream<Uint8Array>) bytes += chunk.byteLength
  return bytes
}

interface Probe {
  decide: number[]
  capture: number[]
  statuses: number[]
}

/** /decide and a capture, one after the other, until stopped: how long each took. */
async function probe(url: string, stopped: () => boolean): Promise<Probe> {
  const out: Probe = { decide: [], capture: [], statuses: [] }
  for (let i = 0; !stopped(); i++) {
    let started = performance.now()
    const decided = await fetch(`${url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: `visitor-${i}` }) })
    await decided.arrayBuffer()
    out.decide.push(performance.now() - started)
    out.statuses.push(decided.status)
    started = performance.now()
    const captured = await fetch(`${url}/e/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'probe', distinct_id: `visitor-${i}` }) })
    await captured.arrayBuffer()
    out.capture.push(performance.now() - started)
    out.statuses.push(captured.status)
    await Bun.sleep(10)
  }
  return out
}

/** The serving thread's worst event loop lag since the previous scrape, in ms. */
async function serverLag(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text()
  return Number(/^event_loop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000
}

/** Runs the attack with the probe beside it; prints and checks the probe's figures and the server's own lag. */
async function underAttack(name: string, url: string, attack: () => Promise<number[]>): Promise<number[]> {
  await serverLag(url)
  let done = false
  const probing = probe(url, () => done)
  const statuses = await attack().finally(() => (done = true))
  const seen = await probing
  const lag = await serverLag(url)
  const figures = (label: string, ms: number[]) => `${label} p50 ${percentile(ms, 50).toFixed(0)} ms, p99 ${percentile(ms, 99).toFixed(0)} ms, worst ${Math.max(...ms).toFixed(0)} ms`
  console.log(`[isolation] ${name}: ${seen.decide.length} probes; ${figures('/decide', seen.decide)}; ${figures('capture', seen.capture)}; the serving thread's worst event loop lag ${lag.toFixed(0)} ms; attack answered ${JSON.stringify(statuses)}`)
  expect(lag).toBeLessThan(PROBE_WORST_MS)
  expect(seen.statuses.every((s) => s === 200)).toBe(true)
  for (const ms of [seen.decide, seen.capture]) {
    expect(Math.max(...ms)).toBeLessThan(PROBE_WORST_MS)
    expect(percentile(ms, 99)).toBeLessThan(PROBE_P99_MS)
  }
  return statuses
}

const STORES = [
  { name: 'embedded stores', choice: { postgres: 'embedded', clickhouse: 'embedded' } as const },
  { name: 'Postgres + ClickHouse 18.16', choice: { postgres: 'real', clickhouse: 'real' } as const },
]

for (const store of STORES) {
  describe(`the hot path under analytics load (${store.name})`, () => {
    let svc: ServiceProcess

    beforeAll(async () => {
      svc = await spawnService({ ...(await freshEnv(store.choice)), LOG_LEVEL: 'warn' })
      const flag = await fetch(`${svc.url}/api/projects/@current/feature_flags/`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ key: 'half', filters: { groups: [{ properties: [], rollout_percentage: 50 }] } }),
      })
      expect(flag.status).toBe(201)
      // two years of events, a thousand values of `v`, each event carrying a kilobyte
      const now = Date.now()
      for (let start = 0; start < EVENTS; start += 1000) {
        const batch = Array.from({ length: 1000 }, (_, k) => {
          const i = start + k
          return { event: 'pageview', distinct_id: `user-${i % 3000}`, timestamp: new Date(now - (i % DAYS) * 86_400_000 - 3_600_000).toISOString(), properties: { v: `value-${i % VALUES}`, padding: PADDING } }
        })
        const r = await fetch(`${svc.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) })
        expect(r.status).toBe(200)
      }
      const deadline = Date.now() + 120_000
      for (;;) {
        const r = await fetch(`${svc.url}/api/projects/@current/query/`, { method: 'POST', headers: auth, body: JSON.stringify({ query: { kind: 'HogQLQuery', query: "SELECT count() FROM events WHERE event = 'pageview'" } }) })
        if (r.status === 200 && ((await r.json()) as { results: number[][] }).results[0]?.[0] === EVENTS) break
        if (Date.now() > deadline) throw new Error('the events were not queryable within 120 s')
        await Bun.sleep(250)
      }
    }, 240_000)
    afterAll(async () => {
      await svc?.stop()
    })

    test('four trends over all time with a 1,000-value breakdown (MBs each) hold neither capture nor /decide', async () => {
      const trends = {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: 'pageview', math: 'total' }],
        interval: 'day',
        dateRange: { date_from: 'all' },
        breakdownFilter: { breakdown: 'v', breakdown_type: 'event', breakdown_limit: VALUES },
      }
      let largest = 0
      const statuses = await underAttack(`${store.name}, 4 trends of ${VALUES} series × ${DAYS} days`, svc.url, () =>
        Promise.all(
          Array.from({ length: 4 }, async () => {
            const r = await fetch(`${svc.url}/api/projects/@current/query/`, { method: 'POST', headers: auth, body: JSON.stringify({ query: trends, refresh: 'force_blocking' }) })
            largest = Math.max(largest, await drain(r))
            return r.status
          }),
        ),
      )
      console.log(`[isolation] ${store.name}: the largest trends answer ${(largest / 1024 / 1024).toFixed(1)} MB`)
      expect(statuses).toEqual([200, 200, 200, 200])
      expect(largest).toBeGreaterThan(5 * 1024 * 1024)
    }, 300_000)

    test('eight event lists of tens of MB hold neither capture nor /decide', async () => {
      const list = { kind: 'HogQLQuery', query: 'SELECT uuid, event, distinct_id, properties, timestamp FROM events LIMIT 50000' }
      let largest = 0
      const statuses = await underAttack(`${store.name}, 8 event lists of ${EVENTS} events`, svc.url, () =>
        Promise.all(
          Array.from({ length: 8 }, async () => {
            const r = await fetch(`${svc.url}/api/projects/@current/query/`, { method: 'POST', headers: auth, body: JSON.stringify({ query: list }) })
            largest = Math.max(largest, await drain(r))
            return r.status
          }),
        ),
      )
      console.log(`[isolation] ${store.name}: the largest event list ${(largest / 1024 / 1024).toFixed(1)} MB`)
      // each is answered: 200, or a retryable refusal when the threads' queue is full; never a closed connection
      for (const status of statuses) expect([200, 503]).toContain(status)
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0)
      expect(largest).toBeGreaterThan(10 * 1024 * 1024)
    }, 300_000)

    test('twenty reads at once of a dashboard of MBs of stored results: every one answered, capture and /decide untouched', async () => {
      const dashboard = (await (await fetch(`${svc.url}/api/projects/@current/dashboards/`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'flood' }) })).json()) as { id: number }
      for (let i = 0; i < 12; i++) {
        const query = {
          kind: 'InsightVizNode',
          source: {
            kind: 'TrendsQuery',
            series: [{ kind: 'EventsNode', event: 'pageview', math: 'total' }],
            interval: 'day',
            dateRange: { date_from: `-${200 + i}d` },
            breakdownFilter: { breakdown: 'v', breakdown_type: 'event', breakdown_limit: 100 },
          },
        }
        const r = await fetch(`${svc.url}/api/projects/@current/insights/`, { method: 'POST', headers: auth, body: JSON.stringify({ name: `tile ${i}`, query, dashboards: [dashboard.id] }) })
        expect(r.status).toBe(201)
      }
      // computed and stored once; the flood then reads the stored results
      const refreshed = await fetch(`${svc.url}/api/projects/@current/dashboards/${dashboard.id}/?refresh=true`, { headers: auth })
      expect(refreshed.status).toBe(200)
      const stored = await drain(refreshed)
      console.log(`[isolation] ${store.name}: a dashboard of 12 tiles, ${(stored / 1024 / 1024).toFixed(1)} MB`)
      const statuses = await underAttack(`${store.name}, 20 reads of a ${(stored / 1024 / 1024).toFixed(1)} MB dashboard`, svc.url, () =>
        Promise.all(
          Array.from({ length: 20 }, async () => {
            const r = await fetch(`${svc.url}/api/projects/@current/dashboards/${dashboard.id}/`, { headers: auth })
            await drain(r)
            return r.status
          }),
        ),
      )
      for (const status of statuses) expect([200, 503, 504]).toContain(status)
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0)
    }, 300_000)

    // On DuckDB this found a 400 "needs more memory … even with no other query running" for an issue list that fits
    // (the flush's writes took the memory beside it), and in about one run in four DuckDB's own checkpoint on a
    // commit running short of memory beside the reads, which invalidated the database until a restart. Writes now
    // come first, and the write whose commit may checkpoint has the memory to itself (duckdb-database.ts).
    test("survey stats and error tracking's issue lists, twenty of each at once: every one answered, capture and /decide untouched", async () => {
      const api = (path: string, init: RequestInit = {}) => fetch(`${svc.url}/api/projects/@current/${path}`, { headers: auth, ...init })
      const made = await api('surveys/', {
        method: 'POST',
        body: JSON.stringify({ name: 'flood', type: 'api', questions: [{ type: 'open', question: 'Why?' }], start_date: new Date(Date.now() - DAYS * 86_400_000).toISOString() }),
      })
      expect(made.status).toBe(201)
      const survey = (await made.json()) as { id: string; questions: { id: string }[] }
      // two years of survey events (a kilobyte answer each) and 300 issues of exceptions
      const now = Date.now()
      const at = (i: number) => new Date(now - (i % DAYS) * 86_400_000 - 3_600_000).toISOString()
      const surveyEvents = Array.from({ length: 6000 }, (_, i) => ({
        event: i % 3 === 0 ? 'survey sent' : 'survey shown',
        distinct_id: `user-${i % 3000}`,
        timestamp: at(i),
        properties: { $survey_id: survey.id, [`$survey_response_${survey.questions[0]!.id}`]: `${i} ${PADDING}`, $survey_submission_id: `sub-${i}` },
      }))
      const exceptions = Array.from({ length: 6000 }, (_, i) => ({
        event: '$exception',
        distinct_id: `user-${i % 3000}`,
        timestamp: at(i),
        properties: {
          $session_id: `session-${i % 500}`,
          $exception_list: [{ type: `FloodError${i % 300}`, value: `failure ${i % 300} ${PADDING}`, stacktrace: { type: 'raw', frames: [{ platform: 'web:javascript', filename: 'https://app.example/app.js', function: `handler${i % 300}`, lineno: i % 300, colno: 1, in_app: true }] } }],
        },
      }))
      const all = [...surveyEvents, ...exceptions]
      for (let start = 0; start < all.length; start += 1000) {
        const r = await fetch(`${svc.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch: all.slice(start, start + 1000) }) })
        expect(r.status).toBe(200)
      }
      const range = `date_from=${encodeURIComponent(new Date(now - DAYS * 86_400_000 - 86_400_000).toISOString())}`
      const deadline = Date.now() + 120_000
      for (;;) {
        const stats = (await (await api(`surveys/${survey.id}/stats/`)).json()) as { stats?: Record<string, { total_count: number }> }
        const issues = (await (await api(`error_tracking/issues/?limit=100&${range}`)).json()) as { results?: { aggregations: { occurrences: number } }[] }
        const occurrences = (issues.results ?? []).reduce((sum, i) => sum + i.aggregations.occurrences, 0)
        if (stats.stats?.['survey sent']?.total_count === 2000 && issues.results?.length === 100 && occurrences === 2000) break
        if (Date.now() > deadline) {
          // the store's own complaints (a flush outage says why), not the requests' refusals
          const logs = svc.logs().split('\n').filter((l) => /"level":"(warn|error)"/.test(l) && !l.includes('request answered'))
          console.log(logs.slice(0, 12).map((l) => l.slice(0, 700)).join('\n'))
          throw new Error(`the survey events and issues were not read within 120 s: ${JSON.stringify(stats).slice(0, 300)}; ${issues.results?.length} issues, ${occurrences} occurrences`)
        }
        await Bun.sleep(500)
      }
      const reads = [`surveys/${survey.id}/stats/`, 'surveys/stats/', `error_tracking/issues/?limit=100&${range}`, `error_tracking/issues/?limit=100&order_by=occurrences&${range}`]
      const statuses = await underAttack(`${store.name}, 20 survey stats and 20 issue lists over ${DAYS} days`, svc.url, () =>
        Promise.all(
          Array.from({ length: 40 }, async (_, i) => {
            const r = await api(reads[i % reads.length]!)
            await drain(r)
            return r.status
          }),
        ),
      )
      for (const status of statuses) expect([200, 503, 504]).toContain(status)
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0)
    }, 300_000)
  })
}
