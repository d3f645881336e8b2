// A client that goes away stops its query (a real server over HTTP, the embedded store): the process running a
// heavy query is killed when its client hangs up, and a query waiting for a slot leaves the queue (a process that
// finishes its statement is kept for the next one, so a process still there would mean the statement ran on).
// Both are counted as client_closed and not logged as errors (before: "ran longer than 30000 ms"). Capture answers
// while they run.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

describe('query API: the client goes away', () => {
  let svc: ServiceProcess
  let file: string
  beforeAll(async () => {
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    file = join(env.DATA_DIR!, 'events.sqlite')
    svc = await spawnService({ ...env, EMBEDDED_EVENT_STORE: 'sqlite', QUERY_TIMEOUT_MS: '600000', LOG_LEVEL: 'info' })
    await fetch(`${svc.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'first', distinct_id: 'd' }) })
    const db = new Database(join(env.DATA_DIR!, 'events.sqlite'))
    for (let tries = 0; tries < 100; tries++) {
      try {
        db.query('SELECT 1 FROM person_distinct_id LIMIT 1').all()
        break
      } catch {
        await Bun.sleep(100)
      }
    }
    db.run('PRAGMA busy_timeout = 5000')
    const insert = db.prepare('INSERT INTO events (uuid, team_id, event, distinct_id, properties, timestamp, created_at) VALUES (?, 1, ?, ?, ?, ?, ?)')
    const now = Date.now()
    db.transaction(() => {
      for (let i = 0; i < 500_000; i++) insert.run(crypto.randomUUID(), `event-${i % 50}`, `user-${i % 3000}`, JSON.stringify({ a: `value-${i}` }), now - i * 1000, now)
    })()
    db.close()
  }, 120_000)
  afterAll(async () => {
    await svc?.stop()
  })

  const post = (query: string, signal?: AbortSignal) =>
    fetch(`${svc.url}/api/projects/1/query/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: { kind: 'HogQLQuery', query } }),
      signal,
    })

  test('heavy queries whose clients hang up free their slots; capture answers meanwhile; not errors', async () => {
    // a product of the events with themselves, through a subquery per row group: minutes of work
    const heavy = "SELECT count(DISTINCT concat(a, b)) FROM (SELECT concat(properties, toString(timestamp)) AS a, lower(concat(distinct_id, properties)) AS b FROM events WHERE properties.a LIKE '%1%' ORDER BY a DESC, b)"
    // the query processes of this service: their command line names the store's file (read from /proc: no ps needed)
    const queryProcesses = async () => {
      let n = 0
      for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
        let cmdline = ''
        try {
          cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        } catch {
          continue // gone meanwhile
        }
        if (cmdline.includes('sqlite-process.ts') && cmdline.includes(file)) n++
      }
      return n
    }
    expect(await queryProcesses()).toBe(0)
    const clients = [new AbortController(), new AbortController()]
    const running = clients.map((c) => post(heavy, c.signal).catch(() => 'aborted'))
    // one project holds one of the two slots: the second query waits for it (query-fairness.test.ts)
    for (let i = 0; i < 200 && (await queryProcesses()) < 1; i++) await Bun.sleep(10)
    await Bun.sleep(100)
    expect(await queryProcesses()).toBe(1)
    const capture = await fetch(`${svc.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'during', distinct_id: 'd' }) })
    expect(capture.status).toBe(200)
    for (const c of clients) c.abort()
    expect(await Promise.all(running)).toEqual(['aborted', 'aborted'])
    let left = 1
    for (let i = 0; i < 100 && left > 0; i++) {
      left = await queryProcesses()
      if (left > 0) await Bun.sleep(50)
    }
    expect(left).toBe(0)
    // not a timeout, not an error: counted (by the analytics thread, a moment after the statements end), and said only at debug
    let metrics = ''
    for (let i = 0; i < 100 && !metrics.includes('query_requests_total{outcome="client_closed"} 2'); i++) {
      metrics = await (await fetch(`${svc.url}/metrics`)).text()
      if (!metrics.includes('query_requests_total{outcome="client_closed"} 2')) await Bun.sleep(50)
    }
    expect(metrics).toContain('query_requests_total{outcome="client_closed"} 2')
    expect(svc.logs()).not.toMatch(/ran longer|"level":50/)
    const small = await post("SELECT count() FROM events WHERE distinct_id = 'user-7'")
    expect(small.status).toBe(200)
    expect(((await small.json()) as { results: unknown[][] }).results).toEqual([[167]])
  }, 60_000)
})
