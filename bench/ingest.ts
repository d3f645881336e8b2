// Ingest: /batch/ with 100-event batches (~20 KB) from wrk over 32 connections, against a bare Bun.serve
// that only parses the JSON, in the same run. Also: peak RSS, how deep the ring got, and whether the
// flusher kept up (time to drain what was acknowledged, and every acknowledged event stored).
import { rmSync } from 'node:fs'
import { startClickHouse } from '../test/helpers/clickhouse-server'
import { startPostgres } from '../test/helpers/postgres-server'
import { metric, rssMb, sampler, startBaseline, startService, table, tempDir, wrk, type WrkResult } from './lib'

export const KEY = 'phc_bench_project_key_0001'
/**
 * The bench is one project: its share of the write-ahead log is the whole log (the share, a quarter by default, is
 * what keeps one tenant from filling it for the others: a saturating single-tenant bench would measure 429s).
 */
export const ONE_PROJECT = { WAL_PROJECT_SHARE: '1' }

export function batchBody(events = 100): string {
  const now = Date.now()
  return JSON.stringify({
    api_key: KEY,
    batch: Array.from({ length: events }, (_, i) => ({
      event: i % 10 === 0 ? 'signed up' : '$pageview',
      timestamp: new Date(now - i * 1000).toISOString(),
      properties: {
        distinct_id: `user-${i}`,
        $current_url: `https://shop.example/products/${i}?ref=bench`,
        $browser: 'Chrome',
        $os: 'Mac OS X',
        $lib: 'posthog-node',
        $lib_version: '4.11.7',
        plan: 'pro',
      },
    })),
  })
}

interface Row extends Record<string, string | number> {}

async function runService(
  label: string,
  env: Record<string, string>,
  baseline: WrkResult,
  seconds: number,
  processes: number,
  options: { drain: boolean } = { drain: true },
): Promise<Row> {
  const service = await startService({ INIT_PROJECT_API_KEY: KEY, ...ONE_PROJECT, ...env }, processes)
  let peakRss = 0
  let peakBacklog = 0
  const stopSampling = sampler(250, async () => {
    peakRss = Math.max(peakRss, service.pids.reduce((n, pid) => n + rssMb(pid), 0))
    peakBacklog = Math.max(peakBacklog, await metric(service.url, 'pipeline_ring_depth_events').catch(() => 0))
  })
  const body = batchBody()
  const flushedBefore = await metric(service.url, 'pipeline_flushed_events_total')
  const result = await wrk(`${service.url}/batch/`, [body], { seconds, connections: 32 })
  // what the flush worker stored while capture was saturated (its counters reach /metrics within 200 ms)
  const flushedUnderLoad = (await metric(service.url, 'pipeline_flushed_events_total')) - flushedBefore
  const drainStart = Date.now()
  // every process flushes what it acknowledged; wait for the backlog gauges of the process we can see
  while (options.drain && Date.now() - drainStart < 120_000 && (await metric(service.url, 'pipeline_backlog_records')) > 0) await Bun.sleep(100)
  const drained = options.drain ? (Date.now() - drainStart) / 1000 : Number.NaN
  await stopSampling()
  await Bun.sleep(600) // the flush worker relays its counters every 200 ms
  const flushed = processes === 1 ? await metric(service.url, 'pipeline_flushed_events_total') : Number.NaN
  await service.stop()
  const acked = (result.requests - result.non2xx) * 100
  return {
    target: label,
    'req/s': Math.round(result.rps),
    'events/s': Math.round(result.rps * 100),
    'p50 ms': result.p50,
    'p99 ms': result.p99,
    'vs bare req/s': `${(result.rps / baseline.rps).toFixed(2)}x`,
    'vs bare p99': `${(result.p99 / baseline.p99).toFixed(2)}x`,
    'non-2xx': result.non2xx + result.errors,
    'peak RSS MB': Math.round(peakRss),
    'peak backlog events': peakBacklog,
    'drain s': options.drain ? drained : 'n/a',
    // what the flush worker sustained while capture was saturated, and over the run and the drain together
    'flushed ev/s under load': processes === 1 && options.drain ? Math.round(flushedUnderLoad / result.seconds) : 'n/a',
    'flushed ev/s': processes === 1 && options.drain ? Math.round(flushed / (result.seconds + drained)) : 'n/a',
    'stored/acked': processes === 1 && options.drain ? `${flushed}/${acked}` : 'n/a',
  }
}

/** Figures of the last ingest run that other benches' rows are compared with (see run.ts). */
export const ingestFigures = { bareEventsPerSecond: 0, clickhouseFlushedUnderLoad: 0 }

export async function ingestBench(seconds: number, options: { clickhouse?: boolean; processes?: number } = {}): Promise<string> {
  const processes = options.processes ?? 1
  const base = await startBaseline('parse')
  const baseline = await wrk(`${base.url}/`, [batchBody()], { seconds, connections: 32 })
  ingestFigures.bareEventsPerSecond = baseline.rps * 100
  await base.stop()
  const rows: Row[] = [
    {
      target: 'bare Bun.serve (JSON.parse + 200)',
      'req/s': Math.round(baseline.rps),
      'events/s': Math.round(baseline.rps * 100),
      'p50 ms': baseline.p50,
      'p99 ms': baseline.p99,
      'vs bare req/s': '1.00x',
      'vs bare p99': '1.00x',
      'non-2xx': baseline.non2xx + baseline.errors,
      'peak RSS MB': 0,
      'peak backlog events': 0,
      'drain s': 0,
      'flushed ev/s under load': '',
      'flushed ev/s': '',
      'stored/acked': '',
    },
  ]
  // The capture path alone: the flush is put off past the run, so the answers do not share the CPU with it.
  const quiet = tempDir('phog-bench-ingest-')
  const deferred = { DATA_DIR: quiet, FLUSH_INTERVAL_MS: '3600000', FLUSH_MAX_EVENTS: '1000000000', SHUTDOWN_TIMEOUT_MS: '1000' }
  rows.push(await runService('phog capture path alone (flush put off until after the run)', deferred, baseline, seconds, processes, { drain: false }))
  rmSync(quiet, { recursive: true, force: true })
  // the embedded stores, with the events in each embedded engine (EMBEDDED_EVENT_STORE)
  for (const [engine, name] of [['sqlite', 'SQLite'], ['duckdb', 'DuckDB']] as const) {
    const dir = tempDir('phog-bench-ingest-')
    rows.push(await runService(`phog → embedded stores (PGlite + ${name})${processes > 1 ? ` (${processes} processes)` : ''}`, { DATA_DIR: dir, EMBEDDED_EVENT_STORE: engine }, baseline, seconds, processes))
    rmSync(dir, { recursive: true, force: true })
  }
  if (options.clickhouse !== false) {
    const [ch, pg] = await Promise.all([startClickHouse(), startPostgres()])
    const dir2 = tempDir('phog-bench-ingest-')
    try {
      const env = { DATA_DIR: dir2, CLICKHOUSE_URL: `${ch.url}/bench`, DATABASE_URL: await pg.createDatabase() }
      const clickhouseRow = await runService(`phog → Postgres 15 + ClickHouse ${ch.version}`, env, baseline, seconds, processes)
      rows.push(clickhouseRow)
      ingestFigures.clickhouseFlushedUnderLoad = Number(clickhouseRow['flushed ev/s under load']) || 0
    } finally {
      await Promise.all([ch.destroy(), pg.destroy()])
      rmSync(dir2, { recursive: true, force: true })
    }
  }
  return `### ingest: POST /batch/, 100 events (${batchBody().length} bytes) per request, wrk 1 thread × 32 connections × ${seconds}s\n\n${table(rows)}\n`
}
