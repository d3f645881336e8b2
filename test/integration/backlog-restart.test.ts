// /_ready's backlog after a crash: what the previous process accepted and the event store does not have yet is
// counted (records, events and bytes) until replay has stored it, and then all of it is 0, even when the consumers
// restarted at different checkpoints (the learner ahead of the store writer).
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { configWith } from '../../src/config'
import { silentLogger } from '../../src/log'
import { createMetrics } from '../../src/ops/metrics'
import { Checkpoint } from '../../src/pipeline/checkpoint'
import { startServices, type Services } from '../../src/services'
import { spawnService } from '../helpers/spawn-service'
import { freshEnv, PROJECT_KEY } from '../helpers/stack'

const RECORDS = 40
const PER_RECORD = 500

const body = (record: number) =>
  JSON.stringify({
    api_key: PROJECT_KEY,
    batch: Array.from({ length: PER_RECORD }, (_, i) => ({ event: 'replayed', uuid: crypto.randomUUID(), properties: { distinct_id: `u${i % 40}`, record, i } })),
  })

describe('the backlog after a crash', () => {
  let services: Services | undefined
  afterAll(async () => {
    await services?.close()
  })

  test('counted until replay has stored it, then 0 (records, events and bytes), with the learner ahead of the store', async () => {
    const env: Record<string, string> = { ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), EMBEDDED_EVENT_STORE: 'sqlite' }
    // nothing flushed before the crash
    const first = await spawnService({ ...env, FLUSH_INTERVAL_MS: '600000', FLUSH_MAX_EVENTS: '100000000' })
    const send = async (record: number) => {
      const gzip = record % 2 === 1
      const r = await fetch(`${first.url}/batch/`, {
        method: 'POST',
        headers: gzip ? { 'content-encoding': 'gzip', 'content-type': 'application/json' } : { 'content-type': 'application/json' },
        body: gzip ? gzipSync(body(record)) : body(record),
      })
      expect(r.status).toBe(200)
    }
    for (let record = 0; record < RECORDS / 2; record++) await send(record)
    await Bun.sleep(1500) // the tally of the first half is saved beside the log; the second half is not
    for (let record = RECORDS / 2; record < RECORDS; record++) await send(record)
    await first.kill()
    expect(existsSync(join(env.DATA_DIR!, 'wal', 'backlog'))).toBe(true)

    // the learner had finished everything, the store writer nothing: only the store writer replays
    const checkpoint = new Checkpoint(join(env.DATA_DIR!, 'wal', 'checkpoint'))
    checkpoint.update((s) => {
      s.done.learn = RECORDS
      s.done.store = 0
    })
    checkpoint.close()

    // the first batch 1.5 s after the start, and no earlier for the number of events waiting: a backlog to read
    services = await startServices(configWith({ ...env, FLUSH_INTERVAL_MS: '1500', FLUSH_MAX_EVENTS: '100000000' }), silentLogger, { metrics: createMetrics() })
    const before = (await services.readiness()).backlog
    console.log(`[backlog] at start: ${JSON.stringify(before)}`)
    expect(before).toMatchObject({ records: RECORDS, events: RECORDS * PER_RECORD, draining: true })
    expect(before!.bytes).toBeGreaterThan(0)

    const events = new Database(join(env.DATA_DIR!, 'events.sqlite'), { readonly: true })
    const stored = () => {
      try {
        return (events.query("SELECT count(*) AS n FROM events WHERE event = 'replayed'").get() as { n: number }).n
      } catch {
        return 0 // the flush worker has not made the table yet
      }
    }
    const samples: string[] = []
    const deadline = Date.now() + 60_000
    for (;;) {
      const backlog = (await services.readiness()).backlog!
      const landed = stored()
      samples.push(`${landed}:${backlog.records}/${backlog.events}/${backlog.bytes}`)
      // whatever the store does not have yet is still counted (read before the store: it can only have more)
      expect(backlog.events).toBeGreaterThanOrEqual(RECORDS * PER_RECORD - landed)
      if (landed < RECORDS * PER_RECORD) expect(backlog.records).toBeGreaterThan(0)
      if (backlog.records === 0) break
      expect(Date.now()).toBeLessThan(deadline)
      await Bun.sleep(25)
    }
    console.log(`[backlog] stored:records/events/bytes while replaying: ${samples.filter((_, i) => i % 10 === 0).join(' ')}`)
    expect(stored()).toBe(RECORDS * PER_RECORD)
    events.close()
    // idle: nothing left, bytes included
    await Bun.sleep(200)
    expect((await services.readiness()).backlog).toEqual({ records: 0, events: 0, bytes: 0, draining: false })
    await Promise.all(services.metrics.beforeScrape.map((update) => update()))
    const metrics = await services.metrics.registry.metrics()
    expect(metrics).toMatch(/^pipeline_wal_unflushed_bytes 0$/m)
    expect(metrics).toMatch(/^pipeline_ring_depth_events 0$/m)
  })
})
