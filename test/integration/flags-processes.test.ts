// Two server processes sharing one Postgres (and nothing else): a flag written through one is answered by
// the other's /decide within a second. Then each of the two mechanisms alone: NOTIFY with the periodic version
// check pushed out to a minute, and the version check alone for a write that sends no NOTIFY.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { insertFlag } from '../helpers/flags'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshDataDir, freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { twoProcessesOnOnePostgres } from '../helpers/two-processes'

const api = (p: ServiceProcess, path: string, init: { method?: string; json?: unknown } = {}) =>
  fetch(`${p.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  })

const flagsOf = async (p: ServiceProcess): Promise<Record<string, unknown>> => {
  const r = await fetch(`${p.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'someone' }) })
  expect(r.status).toBe(200)
  return ((await r.json()) as any).featureFlags
}

/** ms until `check` holds on process p (polling every 10 ms), or -1 after `withinMs` */
const until = async (p: ServiceProcess, check: (flags: Record<string, unknown>) => boolean, withinMs = 5000): Promise<number> => {
  const start = performance.now()
  while (performance.now() - start < withinMs) {
    if (check(await flagsOf(p))) return performance.now() - start
    await Bun.sleep(10)
  }
  return -1
}

/** The process's successful flag cache reloads for one reason (notify, poll, miss, write, ...), from /metrics. */
const reloads = async (p: ServiceProcess, reason: string): Promise<number> => {
  const text = await (await fetch(`${p.url}/metrics`)).text()
  let total = 0
  for (const line of text.split('\n')) {
    if (!line.startsWith('flag_cache_reloads_total{')) continue
    if (line.includes(`reason="${reason}"`) && line.includes('outcome="ok"')) total += Number(line.split(' ').pop())
  }
  return total
}

const ON = { groups: [{ properties: [], rollout_percentage: 100 }] }
const OFF = { groups: [{ properties: [], rollout_percentage: 0 }] }

describe('flag cache across two processes', () => {
  const pair = twoProcessesOnOnePostgres()

  test('create, PATCH and delete on A are seen by B within a second', async () => {
    const { a, b } = pair
    expect(await flagsOf(b)).toEqual({}) // B has the project cached, without flags
    const created = await api(a, '/api/projects/@current/feature_flags/', {
      method: 'POST',
      json: { key: 'shared-flag', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
    })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as any
    expect(await flagsOf(a)).toEqual({ 'shared-flag': true }) // the writer: at once
    const seen = await until(b, (f) => f['shared-flag'] === true)
    expect(seen).toBeGreaterThanOrEqual(0)
    expect(seen).toBeLessThan(1000)

    for (const [change, expected] of [
      [{ filters: { groups: [{ properties: [], rollout_percentage: 0 }] } }, false],
      [{ filters: { groups: [{ properties: [], rollout_percentage: 100 }] } }, true],
      [{ active: false }, undefined],
    ] as const) {
      const r = await api(a, `/api/projects/@current/feature_flags/${id}/`, { method: 'PATCH', json: change })
      expect(r.status).toBe(200)
      const ms = await until(b, (f) => f['shared-flag'] === expected)
      expect({ change, ms: ms >= 0 && ms < 1000 }).toEqual({ change, ms: true })
    }

    // and the other way round, with local_evaluation too
    const back = await api(b, `/api/projects/@current/feature_flags/${id}/`, { method: 'PATCH', json: { active: true } })
    expect(back.status).toBe(200)
    expect(await until(a, (f) => f['shared-flag'] === true)).toBeLessThan(1000)
    const le = (await (await api(a, `/api/feature_flag/local_evaluation?token=${PROJECT_KEY}`)).json()) as any
    expect(le.flags.find((f: { key: string }) => f.key === 'shared-flag')).toMatchObject({ active: true, version: 5 })
  })
})

describe('flag cache across processes, each mechanism alone', () => {
  // a and b check versions only once a minute: within a test, only NOTIFY can tell them of a change.
  // c checks every 100 ms. Writes made straight in SQL bump the version but send no NOTIFY (the NOTIFY is
  // sent by the application's write path, src/flags/repository.ts bump(), not by a trigger).
  let a: ServiceProcess
  let b: ServiceProcess
  let c: ServiceProcess
  let sql: postgres.Sql
  beforeAll(async () => {
    const env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
    a = await spawnService({ ...env, LOG_LEVEL: 'warn', FLAG_REFRESH_INTERVAL_MS: '60000' })
    ;[b, c] = await Promise.all([
      spawnService({ ...env, DATA_DIR: await freshDataDir('real'), LOG_LEVEL: 'warn', FLAG_REFRESH_INTERVAL_MS: '60000' }),
      spawnService({ ...env, DATA_DIR: await freshDataDir('real'), LOG_LEVEL: 'warn', FLAG_REFRESH_INTERVAL_MS: '100' }),
    ])
    sql = postgres(env.DATABASE_URL, { max: 1, onnotice: () => undefined })
  })
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), c?.stop(), sql?.end()])
  })

  test('with a one-minute version check, a create and PATCHes on A reach B within a second, by NOTIFY', async () => {
    expect(await flagsOf(b)).toEqual({}) // B has the project cached, without flags
    const notifiedBefore = await reloads(b, 'notify')
    expect(await reloads(b, 'poll')).toBe(0)

    const created = await api(a, '/api/projects/@current/feature_flags/', { method: 'POST', json: { key: 'notified-flag', filters: ON } })
    expect(created.status).toBe(201)
    const { id } = (await created.json()) as any
    const seen = await until(b, (f) => f['notified-flag'] === true)
    expect(seen).toBeGreaterThanOrEqual(0)
    expect(seen).toBeLessThan(1000)

    for (const [change, expected] of [
      [{ filters: OFF }, false],
      [{ filters: ON }, true],
      [{ active: false }, undefined],
    ] as const) {
      const r = await api(a, `/api/projects/@current/feature_flags/${id}/`, { method: 'PATCH', json: change })
      expect(r.status).toBe(200)
      const ms = await until(b, (f) => f['notified-flag'] === expected)
      expect({ change, ms: ms >= 0 && ms < 1000 }).toEqual({ change, ms: true })
    }
    // B reloaded because it was notified, never because its version check ran
    expect(await reloads(b, 'notify')).toBeGreaterThanOrEqual(notifiedBefore + 4)
    expect(await reloads(b, 'poll')).toBe(0)
  })

  test('a write that sends no NOTIFY is caught up by the 100 ms version check alone, and missed by the one-minute ones', async () => {
    // all three have the project cached
    for (const p of [a, b, c]) expect(await flagsOf(p)).not.toHaveProperty('silent-flag')
    const notified = { b: await reloads(b, 'notify'), c: await reloads(c, 'notify') }
    const polledBefore = await reloads(c, 'poll')

    await insertFlag(sql, { key: 'silent-flag', filters: ON }) // version bumped, no pg_notify
    const seen = await until(c, (f) => f['silent-flag'] === true)
    expect(seen).toBeGreaterThanOrEqual(0)
    expect(seen).toBeLessThan(1000)
    expect(await reloads(c, 'poll')).toBeGreaterThan(polledBefore)
    expect(await reloads(c, 'notify')).toBe(notified.c)

    // the control: without NOTIFY, a and b (checking once a minute) still answer the old flags well after c caught up
    expect(await until(b, (f) => f['silent-flag'] === true, 1500)).toBe(-1)
    expect(await flagsOf(a)).not.toHaveProperty('silent-flag')
    expect(await reloads(b, 'notify')).toBe(notified.b)

    // the next NOTIFY (a write through c's API) brings b up to date, the silent write included
    const r = await api(c, '/api/projects/@current/feature_flags/', { method: 'POST', json: { key: 'loud-flag', filters: ON } })
    expect(r.status).toBe(201)
    expect(await until(b, (f) => f['loud-flag'] === true && f['silent-flag'] === true, 1000)).toBeGreaterThanOrEqual(0)
  })
})
