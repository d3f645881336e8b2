// Query API: two dashboard queries on 1,000,000 events in ClickHouse 18.16 — hourly counts over the last day, and
// people (count(DISTINCT person_id)) per day — through POST /api/projects/1/query/, against the very SQL the API
// compiles sent straight to ClickHouse in the same run; then the embedded store's time on the same rows.
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { startClickHouse } from '../test/helpers/clickhouse-server'
import { startPostgres } from '../test/helpers/postgres-server'
import { ClickHouseEventStore } from '../src/events/clickhouse'
import { compileQuery } from '../src/query/compile'
import { parseQuery } from '../src/query/parser'
import { ClickHouseQueryRunner } from '../src/query/repository'
import { QueryService } from '../src/query/service'
import { startService, table, tempDir } from './lib'

const PERSONAL_KEY = 'phx_bench_personal_key_0001'
const PROJECT_KEY = 'phc_bench_project_key_0001'
const RUNS = Number(process.env.BENCH_QUERY_RUNS ?? 7)

const QUERIES = {
  'hourly counts, last day': 'SELECT toStartOfHour(timestamp) AS hour, count() FROM events WHERE timestamp > now() - INTERVAL 1 DAY GROUP BY hour ORDER BY hour',
  'people per day': 'SELECT toStartOfDay(timestamp) AS day, count(DISTINCT person_id) FROM events GROUP BY day ORDER BY day',
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Medians of `RUNS` timings of each function, the functions taking turns (a loaded machine drifts between blocks). */
async function timedTogether(fns: (() => Promise<unknown>)[]): Promise<number[]> {
  for (const fn of fns) await fn() // warm
  const times = fns.map(() => [] as number[])
  for (let i = 0; i < RUNS; i++) {
    for (const [k, fn] of fns.entries()) {
      const started = performance.now()
      await fn()
      times[k].push(performance.now() - started)
    }
  }
  return times.map(median)
}

async function api(url: string, text: string): Promise<unknown[][]> {
  const r = await fetch(`${url}/api/projects/1/query/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: { kind: 'HogQLQuery', query: text } }),
  })
  const body = (await r.json()) as { results: unknown[][] }
  if (r.status !== 200) throw new Error(`query API answered ${r.status}: ${JSON.stringify(body)}`)
  return body.results
}

export async function queryBench(): Promise<string> {
  const events = Number(process.env.BENCH_QUERY_EVENTS ?? 1_000_000)
  const ids = Math.max(10, Math.floor(events / 50))
  const now = Date.now()
  const [ch, pg] = await Promise.all([startClickHouse(), startPostgres()])
  const dirs = [tempDir('phog-bench-query-ch-'), tempDir('phog-bench-query-embedded-')]
  const services: { stop(): Promise<void> }[] = []
  try {
    const database = 'bench_query'
    const url = `${ch.url}/${database}`
    const store = new ClickHouseEventStore(url)
    await store.init()
    await store.close()
    const nowSeconds = Math.floor(now / 1000)
    // 1 M events over the last two days, ids d0…, one person per two ids (merged pairs)
    await ch.query(`INSERT INTO ${database}.events (uuid, team_id, event, distinct_id, properties, timestamp, created_at, person_id)
      SELECT generateUUIDv4(), 1, concat('event-', toString(number % 20)), concat('d', toString(number % ${ids})),
             concat('{"$browser":"b', toString(number % 7), '","n":', toString(number % 100), '}'),
             toDateTime(${nowSeconds} - (number * 172800 / ${events}), 'UTC'), toDateTime(${nowSeconds}, 'UTC'), NULL
      FROM system.numbers LIMIT ${events}`)
    await ch.query(`INSERT INTO ${database}.person_distinct_id (team_id, distinct_id, person_id, version)
      SELECT 1, concat('d', toString(number)), toUUID(concat('00000000-0000-4000-8000-', toString(100000000000 + intDiv(number, 2)))), 1
      FROM system.numbers LIMIT ${ids}`)

    // as production runs it: ClickHouse and a real Postgres (keys and projects are read from it on every request)
    const service = await startService({ DATA_DIR: dirs[0], CLICKHOUSE_URL: url, DATABASE_URL: await pg.createDatabase(), INIT_PERSONAL_API_KEY: PERSONAL_KEY, INIT_PROJECT_API_KEY: PROJECT_KEY })
    services.push(service)

    // the same rows in the embedded store of a second service
    const embedded = await startService({ DATA_DIR: dirs[1], INIT_PERSONAL_API_KEY: PERSONAL_KEY, INIT_PROJECT_API_KEY: PROJECT_KEY })
    services.push(embedded)
    const file = join(dirs[1], 'events.sqlite')
    const db = new Database(file)
    db.run('PRAGMA busy_timeout = 5000')
    for (let tries = 0; tries < 200; tries++) {
      try {
        db.query('SELECT 1 FROM person_distinct_id LIMIT 1').all()
        break
      } catch {
        await Bun.sleep(100)
      }
    }
    const rows = (await ch.query(`SELECT toString(uuid), event, distinct_id, properties, toUnixTimestamp(timestamp) FROM ${database}.events FORMAT TSV`)).split('\n')
    const insert = db.prepare('INSERT INTO events (uuid, team_id, event, distinct_id, properties, timestamp, created_at) VALUES (?, 1, ?, ?, ?, ?, ?)')
    db.transaction(() => {
      for (const line of rows) {
        if (!line) continue
        const [uuid, event, distinctId, properties, ts] = line.split('\t')
        insert.run(uuid, event, distinctId, properties, Number(ts) * 1000, now)
      }
    })()
    const mapping = db.prepare('INSERT INTO person_distinct_id (team_id, distinct_id, person_id, version) VALUES (1, ?, ?, 1)')
    db.transaction(() => {
      for (let i = 0; i < ids; i++) mapping.run(`d${i}`, `00000000-0000-4000-8000-${100_000_000_000 + Math.floor(i / 2)}`)
    })()
    db.close()

    // the query service alone (parse, compile, run, shape), in this process: what the API adds beyond HTTP and auth
    const queries = new QueryService(new ClickHouseQueryRunner(url), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const out: Record<string, string | number>[] = []
    for (const [name, text] of Object.entries(QUERIES)) {
      const compiled = compileQuery(parseQuery(text), { dialect: 'clickhouse-legacy', teamId: 1, database, now: Date.now() })
      // straight to ClickHouse over HTTP (JSONCompact), the API through its HTTP endpoint, taking turns
      const [direct, inProcess, viaApi, viaEmbedded] = await timedTogether([
        () => ch.query(`${compiled.sql} FORMAT JSONCompact`),
        () => queries.run(1, text),
        () => api(service.url, text),
        () => api(embedded.url, text),
      ])
      // the stores agree on the same rows (now() pinned: the two calls are not at the same instant)
      const pinned = text.replace('now()', `toDateTime('${new Date(now).toISOString().slice(0, 19).replace('T', ' ')}')`)
      const [a, b] = [await api(service.url, pinned), await api(embedded.url, pinned)]
      out.push({
        query: name,
        'ClickHouse direct (ms)': direct.toFixed(1),
        'query service in-process (ms)': inProcess.toFixed(1),
        'API on ClickHouse (ms)': viaApi.toFixed(1),
        'direct / API': (direct / viaApi).toFixed(2),
        'API on embedded (ms)': viaEmbedded.toFixed(1),
        'same rows': JSON.stringify(a) === JSON.stringify(b) ? 'yes' : 'NO',
      })
    }
    return `### query API — ${events.toLocaleString('en')} events, ${ids.toLocaleString('en')} distinct ids, ClickHouse ${ch.version}; medians of ${RUNS} runs\n\n${table(out)}\n` +
      `"direct / API": the time of the compiled SQL sent straight to ClickHouse (HTTP, JSONCompact) over the API's time for the same query (goal ≥ 0.8); "query service in-process": parse, compile, run and shape without the HTTP server and the personal-key and project lookups.\n`
  } finally {
    for (const s of services) await s.stop().catch(() => undefined)
    await Promise.all([ch.destroy(), pg.destroy()])
  }
}
