// SIGKILL while posthog-js-shaped recordings arrive at /s/, then restart: every acknowledged snapshot is stored, and
// stored once (a block replayed from the write-ahead log after the kill is not counted twice). On the embedded stores
// and on real Postgres + ClickHouse.
import { describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { ClickHouseRecordingStore } from '../../src/replay/clickhouse-store'
import { SqliteRecordingStore } from '../../src/replay/sqlite-store'
import type { RecordingStore } from '../../src/replay/store'
import { freshEnv, PROJECT_KEY } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { eventually } from './load'

const EVENTS_PER_REQUEST = 3

function body(sessionId: string, at: number): Uint8Array {
  const events = Array.from({ length: EVENTS_PER_REQUEST }, (_, i) => ({ type: 3, data: { source: 2, type: 2, id: i, x: 1, y: 2 }, timestamp: at + i }))
  return gzipSync(JSON.stringify([{ event: '$snapshot', properties: { $session_id: sessionId, $window_id: 'w', $snapshot_data: events, token: PROJECT_KEY, distinct_id: 'chaos' } }]))
}

describe('SIGKILL during replay ingestion', () => {
  for (const stores of ['embedded', 'real'] as const) {
    test(`no acknowledged snapshot is lost or counted twice (${stores} stores)`, async () => {
      const env: Record<string, string> = { ...(await freshEnv({ postgres: stores, clickhouse: stores })), FLUSH_INTERVAL_MS: '20', LOG_LEVEL: 'info' }
      let service: ServiceProcess = await spawnService(env)
      const port = service.port
      const acked: string[] = []
      let running = true
      let n = 0
      const loops = Array.from({ length: 4 }, async () => {
        while (running) {
          const id = `chaos-${++n}`
          try {
            const r = await fetch(`${service.url}/s/?compression=gzip-js`, { method: 'POST', body: body(id, Date.now()), headers: { 'content-type': 'text/plain' } })
            if (r.status === 200) acked.push(id)
          } catch {
            await Bun.sleep(20) // the service is down: never acknowledged
          }
        }
      })
      await Bun.sleep(1500)
      await service.kill()
      await Bun.sleep(100)
      service = await spawnService(env, { port })
      await Bun.sleep(1000)
      running = false
      await Promise.all(loops)
      expect(acked.length).toBeGreaterThan(100)

      const store: RecordingStore = stores === 'real' ? new ClickHouseRecordingStore(env.CLICKHOUSE_URL) : new SqliteRecordingStore(`${env.DATA_DIR}/recordings.sqlite`)
      await store.init()
      try {
        const stored = async () => {
          const rows = await store.list({ teamId: 1, limit: 1_000_000, offset: 0 })
          return new Map(rows.map((r) => [r.sessionId, r.eventCount]))
        }
        const landed = await eventually(async () => {
          const sessions = await stored()
          return acked.every((id) => sessions.has(id))
        }, 60_000, 250)
        if (!landed) console.error(service.logs().slice(-4000))
        const sessions = await stored()
        expect(acked.filter((id) => !sessions.has(id))).toEqual([])
        // every session holds one request's events: a block written again after the kill is not added twice
        expect([...sessions.values()].filter((count) => count !== EVENTS_PER_REQUEST)).toEqual([])
      } finally {
        await store.close()
        await service.stop()
      }
    })
  }
})
