// Query API: two dashboard queries on 1,000,000 events in ClickHouse 18.16 — hourly counts over the last day, and
// people (count(DISTINCT person_id)) per day — through POST /api/projects/1/query/, against the very SQL the API
// compiles sent straight to ClickHouse in the same run; then the embedded store's time on the same rows, on SQLite
// and on DuckDB.
import { compileQuery } from '../src/query/compile'
import { parseQuery } from '../src/query/parser'
import { ClickHouseQueryRunner } from '../src/query/repository'
import { QueryService } from '../src/query/service'
import { table } from './lib'
import { api, benchData, runs, timedTogether } from './query-data'

const QUERIES = {
  'hourly counts, last day': 'SELECT toStartOfHour(timestamp) AS hour, count() FROM events WHERE timestamp > now() - INTERVAL 1 DAY GROUP BY hour ORDER BY hour',
  'people per day': 'SELECT toStartOfDay(timestamp) AS day, count(DISTINCT person_id) FROM events GROUP BY day ORDER BY day',
}

export async function queryBench(): Promise<string> {
  const data = await benchData(Number(process.env.BENCH_QUERY_EVENTS ?? 1_000_000), 2 * 86_400)
  const { ch, database, url, events, ids, now, service, embedded, duckdb } = data
  try {
    // the query service alone (parse, compile, run, shape), in this process: what the API adds beyond HTTP and auth
    const queries = new QueryService(new ClickHouseQueryRunner(url), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const out: Record<string, string | number>[] = []
    for (const [name, text] of Object.entries(QUERIES)) {
      const compiled = compileQuery(parseQuery(text), { dialect: 'clickhouse-legacy', teamId: 1, database, now: Date.now() })
      // straight to ClickHouse over HTTP (JSONCompact), the API through its HTTP endpoint, taking turns
      const [direct, inProcess, viaApi, viaEmbedded, viaDuckDb] = await timedTogether([
        () => ch.query(`${compiled.sql} FORMAT JSONCompact`),
        () => queries.run(1, text),
        () => api(service.url, text).then((a) => a.results),
        () => api(embedded.url, text).then((a) => a.results),
        () => api(duckdb.url, text).then((a) => a.results),
      ])
      // the stores agree on the same rows (now() pinned: the two calls are not at the same instant)
      const pinned = text.replace('now()', `toDateTime('${new Date(now).toISOString().slice(0, 19).replace('T', ' ')}')`)
      const [a, b, c] = [(await api(service.url, pinned)).results, (await api(embedded.url, pinned)).results, (await api(duckdb.url, pinned)).results]
      out.push({
        query: name,
        'ClickHouse direct (ms)': direct.toFixed(1),
        'query service in-process (ms)': inProcess.toFixed(1),
        'API on ClickHouse (ms)': viaApi.toFixed(1),
        'direct / API': (direct / viaApi).toFixed(2),
        'API on embedded SQLite (ms)': viaEmbedded.toFixed(1),
        'API on embedded DuckDB (ms)': viaDuckDb.toFixed(1),
        'DuckDB / ClickHouse API': (viaDuckDb / viaApi).toFixed(2),
        'same rows': `SQLite ${JSON.stringify(a) === JSON.stringify(b) ? 'yes' : 'NO'}, DuckDB ${JSON.stringify(a) === JSON.stringify(c) ? 'yes' : 'NO'}`,
      })
    }
    return `### query API — ${events.toLocaleString('en')} events, ${ids.toLocaleString('en')} distinct ids, ClickHouse ${ch.version}; medians of ${runs} runs\n\n${table(out)}\n` +
      `"direct / API": the time of the compiled SQL sent straight to ClickHouse (HTTP, JSONCompact) over the API's time for the same query (goal ≥ 0.8); "query service in-process": parse, compile, run and shape without the HTTP server and the personal-key and project lookups.\n`
  } finally {
    await data.close()
  }
}
