// Insights on 1,000,000 events over 30 days in ClickHouse 18.16: a 30-day DAU trend broken down by browser, a
// 3-step funnel, a daily lifecycle, a web overview (hundreds of thousands of sessions) and a weekly retention, through POST /api/projects/1/query/, against the HogQL statements each one
// ran (its answer's `hogql`) compiled and sent straight to ClickHouse in the same run; then the embedded store's
// time on the same rows, and whether the two stores answer the same.
import { compileQuery } from '../src/query/compile'
import { parseQuery } from '../src/query/parser'
import { table } from './lib'
import { api, benchData, runs, timedTogether } from './query-data'

const INSIGHTS: Record<string, Record<string, unknown>> = {
  'DAU, 30 days, by browser': {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: null, math: 'dau' }],
    dateRange: { date_from: '-30d' },
    breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' },
  },
  '3-step funnel, 14-day window': {
    kind: 'FunnelsQuery',
    series: ['event-0', 'event-1', 'event-2'].map((event) => ({ kind: 'EventsNode', event })),
    dateRange: { date_from: '-30d' },
    funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' },
  },
  'daily lifecycle': {
    kind: 'LifecycleQuery',
    series: [{ kind: 'EventsNode', event: 'event-0' }],
    dateRange: { date_from: '-30d' },
    interval: 'day',
  },
  'web overview, 30 days (compared)': {
    kind: 'WebOverviewQuery',
    dateRange: { date_from: '-30d' },
    compareFilter: { compare: true },
  },
  'weekly retention': {
    kind: 'RetentionQuery',
    dateRange: { date_from: '-30d' },
    retentionFilter: { targetEntity: { id: 'event-0', type: 'events' }, returningEntity: { id: 'event-1', type: 'events' }, period: 'Week', totalIntervals: 4 },
  },
}

export async function insightsBench(): Promise<string> {
  const data = await benchData(Number(process.env.BENCH_QUERY_EVENTS ?? 1_000_000), 30 * 86_400)
  const { ch, database, events, ids, service, embedded, duckdb } = data
  try {
    const out: Record<string, string | number>[] = []
    for (const [name, query] of Object.entries(INSIGHTS)) {
      const probe = await api(service.url, query).catch((error: Error) => error)
      if (probe instanceof Error) {
        out.push({ insight: name, statements: '—', 'ClickHouse direct (ms)': '—', 'API on ClickHouse (ms)': '—', 'direct / API': '—', 'API on embedded SQLite (ms)': '—', 'API on embedded DuckDB (ms)': '—', 'DuckDB / ClickHouse API': '—', 'same answer': probe.message.slice(0, 80) })
        continue
      }
      // the statements the API ran, compiled as it compiles them, sent straight to ClickHouse one after another
      const statements = String(probe.hogql).split(';\n\n').map((text) => compileQuery(parseQuery(text), { dialect: 'clickhouse-legacy', teamId: 1, database, now: Date.now() }).sql)
      const [direct, viaApi, viaEmbedded, viaDuckDb] = await timedTogether([
        async () => {
          for (const sql of statements) await ch.query(`${sql} FORMAT JSONCompact`)
        },
        () => api(service.url, query),
        () => api(embedded.url, query),
        () => api(duckdb.url, query),
      ])
      const [a, b, c] = [(await api(service.url, query)).results, (await api(embedded.url, query)).results, (await api(duckdb.url, query)).results]
      out.push({
        insight: name,
        statements: statements.length,
        'ClickHouse direct (ms)': direct.toFixed(1),
        'API on ClickHouse (ms)': viaApi.toFixed(1),
        'direct / API': (direct / viaApi).toFixed(2),
        'API on embedded SQLite (ms)': viaEmbedded.toFixed(1),
        'API on embedded DuckDB (ms)': viaDuckDb.toFixed(1),
        'DuckDB / ClickHouse API': (viaDuckDb / viaApi).toFixed(2),
        'same answer': `SQLite ${JSON.stringify(a) === JSON.stringify(b) ? 'yes' : 'NO'}, DuckDB ${JSON.stringify(a) === JSON.stringify(c) ? 'yes' : 'NO'}`,
      })
    }
    return `### insights — ${events.toLocaleString('en')} events over 30 days, ${ids.toLocaleString('en')} distinct ids, ClickHouse ${ch.version}; medians of ${runs} runs, each computed anew (refresh: force_blocking)\n\n${table(out)}\n` +
      `"direct / API": the time of the statements the insight ran (its \`hogql\`, compiled as the API compiles it) sent straight to ClickHouse over the API's time for the insight (goal ≥ 0.8).\n`
  } finally {
    await data.close()
  }
}
