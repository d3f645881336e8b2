// The learner does not wait for the event store: each consumer of the log advances on its own. With ClickHouse
// stopped, an `$identify` carrying new properties reaches /decide within a second (the learner's contract),
// while the store writer waits; once ClickHouse returns, the events land, each once.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startClickHouse, type ClickHouseServer } from '../helpers/clickhouse-server'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { eventually, metric } from '../chaos/load'

const FLAG = { key: 'pro-plan', filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } }

let ch: ClickHouseServer
let service: ServiceProcess
const database = `learner_${crypto.randomUUID().slice(0, 8)}`
beforeAll(async () => {
  ch = await startClickHouse()
  const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
  service = await spawnService({ ...env, CLICKHOUSE_URL: `${ch.url}/${database}`, FLUSH_INTERVAL_MS: '50', LOG_LEVEL: 'warn' })
})
afterAll(async () => {
  await service?.stop()
  await ch?.destroy()
})

async function capture(body: Record<string, unknown>): Promise<void> {
  const r = await fetch(`${service.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, ...body }) })
  expect(r.status).toBe(200)
}

async function flag(distinctId: string): Promise<unknown> {
  const r = await fetch(`${service.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: distinctId }) })
  expect(r.status).toBe(200)
  return ((await r.json()) as { featureFlags: Record<string, unknown> }).featureFlags['pro-plan']
}

describe('the learner while ClickHouse is down', () => {
  test('$identify with new properties: /decide sees them within a second; the events land once ClickHouse is back', async () => {
    const created = await fetch(`${service.url}/api/projects/@current/feature_flags/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(FLAG),
    })
    expect(created.status).toBe(201)
    // before the outage: a known person on the free plan, stored and learned
    await capture({ event: '$identify', distinct_id: 'user-1', properties: { $anon_distinct_id: 'anon-1', $set: { plan: 'free' } } })
    expect(await eventually(async () => (await metric(service.url, 'pipeline_backlog_records')) === 0, 30_000)).toBe(true)
    expect(await flag('user-1')).toBe(false)

    await ch.stop()
    await capture({ event: 'before the upgrade', distinct_id: 'user-1' })
    await capture({ event: '$identify', distinct_id: 'user-2', properties: { $anon_distinct_id: 'anon-2', $set: { plan: 'pro' } } })
    await capture({ event: '$set', distinct_id: 'user-1', properties: { $set: { plan: 'pro' } } })
    // the contract's second, polled (bounded) from the moment the last capture was acknowledged
    const deadline = Date.now() + 1000
    let seen = false
    while (!seen && Date.now() < deadline) {
      seen = (await flag('user-1')) === true && (await flag('anon-2')) === true
      if (!seen) await Bun.sleep(20)
    }
    expect(seen).toBe(true)
    // the store writer, meanwhile, waits for ClickHouse: the log still holds those records for it
    // (the learner's cursor moves just after its commit, which /decide already saw)
    const lag = async (consumer: string) => Number(new RegExp(`pipeline_consumer_lag_records\\{consumer="${consumer}"\\} (\\d+)`).exec(await (await fetch(`${service.url}/metrics`)).text())?.[1])
    expect(await eventually(async () => (await lag('learn')) === 0, 10_000, 20)).toBe(true)
    expect(await lag('store')).toBeGreaterThanOrEqual(3)
    const notReady = await fetch(`${service.url}/_ready`)
    expect(notReady.status).toBe(503)
    // /_ready's body says what waits in the log
    const waiting = ((await notReady.json()) as { backlog: { records: number; events: number; draining: boolean } }).backlog
    expect(waiting.records).toBeGreaterThanOrEqual(3)
    expect(waiting.draining).toBe(true)

    await ch.start()
    expect(await eventually(async () => (await metric(service.url, 'pipeline_backlog_records')) === 0, 60_000)).toBe(true)
    const ready = await fetch(`${service.url}/_ready`)
    expect(ready.status).toBe(200)
    expect(((await ready.json()) as { backlog: unknown }).backlog).toEqual({ records: 0, events: 0, bytes: 0, draining: false })
    const stored = await ch.query(`SELECT event, count() FROM ${database}.events GROUP BY event ORDER BY event FORMAT TSV`)
    expect(stored.trim().split('\n')).toEqual(['$identify\t2', '$set\t1', 'before the upgrade\t1'])
  })
})
