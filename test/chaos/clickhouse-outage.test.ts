// ClickHouse stopped under load (4 s in `npm test`, 30 s in `npm run chaos`): nothing acknowledged is lost;
// when the log reaches its cap capture answers 503 and the clients' retries succeed once ClickHouse is back;
// the backlog drains; /_ready says what is going on; the outage is counted as `unreachable` and its start,
// end and drain are in the log.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startClickHouse, type ClickHouseServer } from '../helpers/clickhouse-server'
import { auditInserts } from '../helpers/clickhouse-audit'
import { freshEnv } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { eventually, FULL, metric, startLoad, storedOnce } from './load'

const OUTAGE_MS = FULL ? 30_000 : 4_000

let ch: ClickHouseServer
let service: ServiceProcess
let env: Record<string, string>
beforeAll(async () => {
  ch = await startClickHouse()
  env = {
    ...(await freshEnv({ postgres: 'real', clickhouse: 'embedded' })),
    CLICKHOUSE_URL: `${ch.url}/outage`,
    FLUSH_INTERVAL_MS: '50',
    // a small log, so that the outage fills it: capture must then refuse (503), not accept what it cannot keep
    WAL_MAX_BYTES: String(2 * 1024 * 1024),
    WAL_SEGMENT_BYTES: String(256 * 1024),
    // one project under load: its share is the whole log, so that the log fills (a share past which one project
    // gets 429 while others continue is test/integration/log-share.test.ts)
    WAL_PROJECT_SHARE: '1',
    LOG_LEVEL: 'info',
  }
  await auditInserts(env.CLICKHOUSE_URL)
  service = await spawnService(env)
})
afterAll(async () => {
  await service?.stop()
  await ch?.destroy()
})

async function ready(): Promise<{ status: number; checks: Record<string, string> }> {
  const r = await fetch(`${service.url}/_ready`)
  return { status: r.status, checks: ((await r.json()) as { checks: Record<string, string> }).checks }
}

describe('ClickHouse outage under load', () => {
  test(`stopped for ${OUTAGE_MS / 1000} s: full log → 503, retries succeed after, backlog drains, exactly once`, async () => {
    const load = startLoad(() => service.url, { concurrency: 6, batchSize: 50, retry: true })
    await Bun.sleep(1000)
    const stopping = Date.now()
    await ch.stop()
    const stopMs = Date.now() - stopping // 18.16 keeps serving open connections while it shuts down
    const outageEnds = Date.now() + OUTAGE_MS
    // on a machine the rest of the suite keeps busy, the load may need longer than the outage to fill the log: the
    // outage then lasts until it is full (at most 30 s)
    const longestOutage = Date.now() + 30_000
    let sawNotReady = false
    let sawFull = false
    let lastChecks: Record<string, string> = {}
    const timeline: string[] = []
    const outageStarted = Date.now()
    while (Date.now() < outageEnds || (!sawFull && Date.now() < longestOutage)) {
      const r = await ready()
      if (r.status === 503 && r.checks.clickhouse === 'unreachable') sawNotReady = true
      if (r.checks.write_ahead_log === 'full') sawFull = true
      lastChecks = r.checks
      timeline.push(`${Date.now() - outageStarted} ${r.checks.write_ahead_log} ${await metric(service.url, 'pipeline_wal_unflushed_bytes')} ${JSON.stringify([...load.statuses])}`)
      await Bun.sleep(250)
    }
    if (!sawFull) console.error(`the log never filled (ClickHouse took ${stopMs} ms to stop): answers ${JSON.stringify([...load.statuses])}, last /_ready ${JSON.stringify(lastChecks)}\n${timeline.join('\n')}, unflushed ${await metric(service.url, 'pipeline_wal_unflushed_bytes')}\n${service.logs().slice(-3000)}`)
    expect(sawNotReady).toBe(true)
    expect(sawFull).toBe(true)
    expect(load.statuses.get(503) ?? 0).toBeGreaterThan(0) // the cap was reached and capture refused
    await ch.start()
    await Bun.sleep(1500)
    await load.stop(Date.now() + 60_000) // pending batches keep retrying until accepted
    expect(load.acked.length).toBeGreaterThan(0)

    expect(await eventually(async () => (await metric(service.url, 'pipeline_wal_unflushed_bytes')) === 0, 60_000, 250)).toBe(true)
    expect(await eventually(async () => (await ready()).status === 200, 10_000)).toBe(true)
    const stored = await storedOnce(env.CLICKHOUSE_URL, load)
    const metrics = await (await fetch(`${service.url}/metrics`)).text()
    if (stored.missing > 0) console.error(`missing events; dead letters: ${metrics.split('\n').filter((l) => l.includes('dead_lettered') || l.includes('flush_failures')).join('\n')}\nlogs:\n${service.logs().slice(-4000)}`)
    expect(stored).toEqual({ missing: 0, duplicated: 0 })
    // a store that was down is waited for, never mistaken for poison
    expect(metrics).not.toContain('pipeline_dead_lettered_events_total{')
    // every batch was eventually acknowledged: the clients' retries succeeded
    expect(load.acked.length).toBe(load.sent.length)
    // an operator can tell an outage from bad data: by the metric's reason, and by the log
    expect(metrics).toMatch(/pipeline_flush_failures_total\{consumer="store",reason="unreachable"\} [1-9]/)
    expect(metrics).not.toContain('reason="rejected_by_store"')
    const outage = service
      .logs()
      .split('\n')
      .filter((l) => l.includes('"outage":'))
      .map((l) => JSON.parse(l) as { outage: string; store: string })
      .filter((l) => l.store === 'clickhouse')
    expect(outage.filter((l) => l.outage === 'started').length).toBeGreaterThanOrEqual(1)
    expect(outage.filter((l) => l.outage === 'ended').length).toBe(outage.filter((l) => l.outage === 'started').length)
    expect(outage.at(-1)?.outage).toBe('drained')
  })
})
