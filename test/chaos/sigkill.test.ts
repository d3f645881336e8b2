// SIGKILL under load, then restart: every acknowledged event is stored exactly once. One round in
// `npm test`; five in `npm run chaos`. On embedded stores (SQLite and DuckDB events) and on real Postgres + ClickHouse.
import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { DuckDbEventStore } from '../../src/events/duckdb'
import { EmbeddedEventStore } from '../../src/events/embedded'
import type { EventStore } from '../../src/events/store'
import { insertedByUuid } from '../helpers/clickhouse-audit'
import { freshEnv } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { eventually, exactlyOnce, FULL, startLoad } from './load'

const ROUNDS = FULL ? 5 : 1

describe('SIGKILL under load', () => {
  for (const stores of ['embedded', 'duckdb', 'real'] as const) {
    test(`${ROUNDS} kill(s) and restarts lose nothing and duplicate nothing (${stores} stores)`, async () => {
      const choice = stores === 'real' ? 'real' : 'embedded'
      const env: Record<string, string> = { ...(await freshEnv({ postgres: choice, clickhouse: choice })), FLUSH_INTERVAL_MS: '20', FLUSH_MAX_EVENTS: '500', LOG_LEVEL: 'info' }
      if (stores !== 'real') env.EMBEDDED_EVENT_STORE = stores === 'duckdb' ? 'duckdb' : 'sqlite'
      let service: ServiceProcess = await spawnService(env)
      const port = service.port
      const load = startLoad(() => service.url, { concurrency: FULL ? 12 : 4, batchSize: FULL ? 40 : 20, retry: false })
      for (let round = 0; round < ROUNDS; round++) {
        await Bun.sleep(1200 + Math.random() * 600)
        await service.kill()
        await Bun.sleep(100) // requests in flight fail: they were never acknowledged
        service = await spawnService(env, { port })
        expect(service.logs()).toContain('"msg":"listening"')
      }
      await Bun.sleep(500)
      await load.stop()
      expect(load.acked.length).toBeGreaterThan(1000 * ROUNDS)
      expect(service.logs()).toContain('replaying the write-ahead log')

      if (stores === 'duckdb') {
        // DuckDB's file is the service's alone: read it once the log is flushed and the service has stopped
        const started = performance.now()
        const drained = await eventually(async () => /^pipeline_backlog_records 0$/m.test(await (await fetch(`${service.url}/metrics`)).text()), 120_000, 250)
        if (!drained) console.error(`the log was not flushed.\nlogs:\n${service.logs().slice(-6000)}`)
        const flushed = performance.now()
        await service.stop()
        console.log(`DuckDB: ${load.acked.length} acknowledged events flushed ${(flushed - started).toFixed(0)} ms after the load stopped; the service stopped in ${(performance.now() - flushed).toFixed(0)} ms`)
      }
      const store: EventStore =
        stores === 'real' ? new ClickHouseEventStore(env.CLICKHOUSE_URL)
        : stores === 'duckdb' ? new DuckDbEventStore(join(env.DATA_DIR, 'events.duckdb'), { memoryMb: 128, threads: 1 })
        : new EmbeddedEventStore(join(env.DATA_DIR, 'events.sqlite'))
      await store.init()
      try {
        // every acknowledged event lands (the store writer runs ahead of the learner; durability is about the store)
        // ClickHouse: every insert as the audit view kept it (a merge could hide a duplicate from the table)
        const count = (uuids: string[]) => (stores === 'real' ? insertedByUuid(env.CLICKHOUSE_URL, 1, uuids) : store.countByUuid(1, uuids))
        const landed = await eventually(async () => (await count(load.acked)).size === load.acked.length, 120_000, 250)
        if (!landed) {
          const metrics = await (await fetch(`${service.url}/metrics`)).text().catch(() => 'unreachable')
          console.error(`not all acknowledged events landed.\nlogs:\n${service.logs().slice(-6000)}\nmetrics:\n${metrics.split('\n').filter((l) => l.startsWith('pipeline') || l.startsWith('store_up')).join('\n')}`)
        }
        const counts = await count(load.sent)
        expect(exactlyOnce(counts, load.acked)).toEqual({ missing: 0, duplicated: 0 })
      } finally {
        await store.close()
        await service.stop()
      }
    })
  }
})
