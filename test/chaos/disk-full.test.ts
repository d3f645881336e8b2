// The log's disk fills up (a small tmpfs): capture answers 503 and never acknowledges what it could not write;
// when space returns (the store comes back and the backlog drains) it accepts again; nothing is lost.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startClickHouse, type ClickHouseServer } from '../helpers/clickhouse-server'
import { auditInserts } from '../helpers/clickhouse-audit'
import { freshEnv } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { eventually, metric, startLoad, storedOnce } from './load'

const mountPoint = mkdtempSync(join(tmpdir(), 'phog-tinyfs-'))
let mounted = false
let ch: ClickHouseServer
let service: ServiceProcess
let env: Record<string, string>

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('the disk-full test mounts a tmpfs and needs root (as CI has)')
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=6m', 'tmpfs', mountPoint])
  mounted = true
  ch = await startClickHouse()
  env = {
    ...(await freshEnv({ postgres: 'real', clickhouse: 'embedded' })),
    DATA_DIR: join(mountPoint, 'data'),
    CLICKHOUSE_URL: `${ch.url}/diskfull`,
    FLUSH_INTERVAL_MS: '50',
    WAL_SEGMENT_BYTES: String(512 * 1024),
    WAL_MAX_BYTES: String(1024 * 1024 * 1024), // the disk fills long before this cap
    LOG_LEVEL: 'info',
  }
  await auditInserts(env.CLICKHOUSE_URL)
  service = await spawnService(env)
})

afterAll(async () => {
  await service?.stop()
  await ch?.destroy()
  if (mounted) execFileSync('umount', ['-l', mountPoint])
  rmSync(mountPoint, { recursive: true, force: true })
})

describe('disk full under the write-ahead log', () => {
  test('503 while the disk is full, nothing half-acknowledged, accepted again once space returns', async () => {
    await ch.stop() // nothing drains: the log grows until the disk is full
    const load = startLoad(() => service.url, { concurrency: 4, batchSize: 100, retry: true })
    const full = await eventually(async () => (load.statuses.get(503) ?? 0) > 5, 30_000, 100)
    expect(full).toBe(true)
    const refused = await fetch(`${service.url}/capture/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: env.INIT_PROJECT_API_KEY, event: 'while full', distinct_id: 'x', properties: { pad: 'p'.repeat(200_000) } }),
    })
    expect(refused.status).toBe(503)
    expect(((await refused.json()) as { code: string }).code).toBe('log_write_failed')
    expect(service.logs()).toContain('ENOSPC')

    await ch.start() // the backlog drains, segments are freed, space returns
    await load.stop(Date.now() + 60_000)
    if (load.acked.length !== load.sent.length) {
      const metrics = (await (await fetch(`${service.url}/metrics`)).text()).split('\n').filter((l) => /^(pipeline_|capture_requests_rejected|store_up)/.test(l))
      console.error(`not every batch got in; statuses ${JSON.stringify([...load.statuses])}\n${metrics.join('\n')}\nlogs:\n${service.logs().slice(-6000)}`)
    }
    expect(load.acked.length).toBe(load.sent.length) // every batch the clients kept retrying got in
    expect(await eventually(async () => (await metric(service.url, 'pipeline_wal_unflushed_bytes')) === 0, 60_000, 250)).toBe(true)

    expect(await storedOnce(env.CLICKHOUSE_URL, load)).toEqual({ missing: 0, duplicated: 0 })
  })
})
