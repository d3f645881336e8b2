// The data of the query and insights benches: N events over a span ending now in ClickHouse 18.16 (ids d0…, one
// person per two ids: merged pairs), served by phog on ClickHouse with a real Postgres, and the same rows in the
// embedded store of a second service, and of a third on DuckDB (EMBEDDED_EVENT_STORE=duckdb: the SQLite file copied
// into its DATA_DIR before it starts, which its first start copies into DuckDB).
import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import { startClickHouse } from '../test/helpers/clickhouse-server'
import { startPostgres } from '../test/helpers/postgres-server'
import { ClickHouseEventStore } from '../src/events/clickhouse'
import { startService, tempDir, type Proc } from './lib'

export const PERSONAL_KEY = 'phx_bench_personal_key_0001'
const PROJECT_KEY = 'phc_bench_project_key_0001'
const RUNS = Number(process.env.BENCH_QUERY_RUNS ?? 7)

export interface BenchData {
  ch: Awaited<ReturnType<typeof startClickHouse>>
  database: string
  /** ClickHouse with the bench's database */
  url: string
  events: number
  ids: number
  now: number
  /** phog on ClickHouse (and real Postgres) */
  service: Proc
  /** phog on the embedded stores, with the same rows */
  embedded: Proc
  /** phog on the embedded stores with the events in DuckDB, with the same rows */
  duckdb: Proc
  close(): Promise<void>
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** Medians of `RUNS` timings of each function, the functions taking turns (a loaded machine drifts between blocks). */
export async function timedTogether(fns: (() => Promise<unknown>)[]): Promise<number[]> {
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

export const runs = RUNS

/** POST /query/ with a query node (a string: HogQL); the whole answer. */
export async function api(url: string, query: string | Record<string, unknown>, refresh = 'force_blocking'): Promise<Record<string, unknown> & { results: unknown[] }> {
  const node = typeof query === 'string' ? { kind: 'HogQLQuery', query } : query
  const r = await fetch(`${url}/api/projects/1/query/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query: node, refresh }),
  })
  const body = (await r.json()) as Record<string, unknown> & { results: unknown[] }
  if (r.status !== 200) throw new Error(`query API answered ${r.status}: ${JSON.stringify(body)}`)
  return body
}

/** `events` events over the `spanSeconds` before now, 20 event names, 7 browsers. */
export async function benchData(events: number, spanSeconds: number): Promise<BenchData> {
  const ids = Math.max(10, Math.floor(events / 50))
  const now = Date.now()
  const [ch, pg] = await Promise.all([startClickHouse(), startPostgres()])
  const dirs = [tempDir('phog-bench-query-ch-'), tempDir('phog-bench-query-embedded-'), tempDir('phog-bench-query-duckdb-')]
  const services: { stop(): Promise<void> }[] = []
  try {
    const database = 'bench_query'
    const url = `${ch.url}/${database}`
    const store = new ClickHouseEventStore(url)
    await store.init()
    await store.close()
    const nowSeconds = Math.floor(now / 1000)
    // the events over the span, ids d0…, one person per two ids (merged pairs); a $pageview in twenty, and sessions
    // of two events of an id each (web analytics reads hundreds of thousands of them)
    await ch.query(`INSERT INTO ${database}.events (uuid, team_id, event, distinct_id, properties, timestamp, created_at, person_id)
      SELECT generateUUIDv4(), 1, if(number % 20 = 19, '$pageview', concat('event-', toString(number % 20))), concat('d', toString(number % ${ids})),
             concat('{"$browser":"b', toString(number % 7), '","n":', toString(number % 100),
                    ',"$pathname":"/p', toString(number % 50), '","$session_id":"s', toString(number % ${ids}), '-', toString(intDiv(number, ${ids} * 2)), '"}'),
             toDateTime(${nowSeconds} - (number * ${spanSeconds} / ${events}), 'UTC'), toDateTime(${nowSeconds}, 'UTC'), NULL
      FROM system.numbers LIMIT ${events}`)
    await ch.query(`INSERT INTO ${database}.person_distinct_id (team_id, distinct_id, person_id, version)
      SELECT 1, concat('d', toString(number)), toUUID(concat('00000000-0000-4000-8000-', toString(100000000000 + intDiv(number, 2)))), 1
      FROM system.numbers LIMIT ${ids}`)

    // as production runs it: ClickHouse and a real Postgres (keys and projects are read from it on every request)
    const service = await startService({ DATA_DIR: dirs[0], CLICKHOUSE_URL: url, DATABASE_URL: await pg.createDatabase(), INIT_PERSONAL_API_KEY: PERSONAL_KEY, INIT_PROJECT_API_KEY: PROJECT_KEY })
    services.push(service)

    // the same rows in the embedded SQLite store of a second service
    const embedded = await startService({ DATA_DIR: dirs[1], EMBEDDED_EVENT_STORE: 'sqlite', INIT_PERSONAL_API_KEY: PERSONAL_KEY, INIT_PROJECT_API_KEY: PROJECT_KEY })
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
    // a consistent copy for the DuckDB service (the first service keeps the file open)
    db.run(`VACUUM INTO '${join(dirs[2], 'events.sqlite')}'`)
    db.close()
    const importStarted = performance.now()
    const duckdb = await startService({ DATA_DIR: dirs[2], EMBEDDED_EVENT_STORE: 'duckdb', INIT_PERSONAL_API_KEY: PERSONAL_KEY, INIT_PROJECT_API_KEY: PROJECT_KEY })
    services.push(duckdb)
    for (let tries = 0; ; tries++) {
      const [[count]] = (await api(duckdb.url, 'SELECT count() FROM events')).results as number[][]
      if (count === events) break
      if (tries > 6000) throw new Error(`DuckDB holds ${count} of ${events} events after 10 minutes`)
      await Bun.sleep(100)
    }
    process.stderr.write(`DuckDB service: ${events} events copied from SQLite in ${((performance.now() - importStarted) / 1000).toFixed(1)} s\n`)

    return {
      ch,
      database,
      url,
      events,
      ids,
      now,
      service,
      embedded,
      duckdb,
      close: async () => {
        for (const s of services) await s.stop().catch(() => undefined)
        await Promise.all([ch.destroy(), pg.destroy()])
      },
    }
  } catch (error) {
    for (const s of services) await s.stop().catch(() => undefined)
    await Promise.all([ch.destroy(), pg.destroy()])
    throw error
  }
}
