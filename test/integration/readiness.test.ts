// /_health and /_ready as the stores come and go, against servers of this test's own.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startClickHouse, type ClickHouseServer } from '../helpers/clickhouse-server'
import { startPostgres, type PostgresServer } from '../helpers/postgres-server'
import { freshDataDir, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'

async function ready(service: ServiceProcess): Promise<{ status: number; body: any }> {
  const r = await fetch(`${service.url}/_ready`)
  return { status: r.status, body: await r.json() }
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  let last = await fn()
  while (!ok(last) && Date.now() < deadline) {
    await Bun.sleep(100)
    last = await fn()
  }
  return last
}

describe('health and readiness', () => {
  let ch: ClickHouseServer
  let pg: PostgresServer
  let service: ServiceProcess
  beforeAll(async () => {
    ;[ch, pg] = await Promise.all([startClickHouse(), startPostgres()])
    service = await spawnService({
      DATA_DIR: await freshDataDir('real'),
      DATABASE_URL: await pg.createDatabase(),
      CLICKHOUSE_URL: `${ch.url}/readiness`,
      INIT_PROJECT_API_KEY: PROJECT_KEY,
      INIT_PERSONAL_API_KEY: PERSONAL_KEY,
    })
  })
  afterAll(async () => {
    await service?.kill()
    await Promise.all([ch?.destroy(), pg?.destroy()])
  })

  test('ready when both stores answer', async () => {
    expect(await ready(service)).toEqual({
      status: 200,
      body: {
        status: 'ready',
        checks: { postgres: 'ok', clickhouse: 'ok', write_ahead_log: 'ok', server: 'ok', consumer_store: 'ok', consumer_learn: 'ok', consumer_store_history: 'ok', consumer_recordings: 'ok', consumer_errors: 'ok' },
        backlog: { records: 0, events: 0, bytes: 0, draining: false },
      },
    })
  })

  test('ClickHouse stopped: not ready, still alive; ready again when it returns', async () => {
    await ch.stop()
    const down = await eventually(() => ready(service), (r) => r.status === 503)
    expect(down.body.checks).toMatchObject({ clickhouse: 'unreachable', postgres: 'ok' })
    expect((await fetch(`${service.url}/_health`)).status).toBe(200)
    await ch.start()
    expect((await eventually(() => ready(service), (r) => r.status === 200)).status).toBe(200)
  })

  test('Postgres stopped: not ready; ready again without a restart', async () => {
    await pg.stop()
    const down = await eventually(() => ready(service), (r) => r.status === 503)
    expect(down.body.checks).toMatchObject({ postgres: 'unreachable', clickhouse: 'ok' })
    await pg.start()
    expect((await eventually(() => ready(service), (r) => r.status === 200, 20_000)).status).toBe(200)
    const api = await fetch(`${service.url}/api/projects/`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })
    expect(api.status).toBe(200)
  })

  test('SIGTERM drains and exits cleanly', async () => {
    expect(await service.stop()).toBe(0)
    expect(service.logs()).toContain('"msg":"stopped"')
  })
})
