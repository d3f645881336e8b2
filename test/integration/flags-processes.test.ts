// Two server processes sharing one Postgres (and nothing else): a flag written through one is answered by
// the other's /decide within a second.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshDataDir, freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

describe('flag cache across two processes', () => {
  let a: ServiceProcess
  let b: ServiceProcess
  beforeAll(async () => {
    const env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
    a = await spawnService({ ...env, LOG_LEVEL: 'warn' })
    b = await spawnService({ ...env, DATA_DIR: await freshDataDir('real'), LOG_LEVEL: 'warn' })
  })
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
  })

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
  /** ms until `check` holds on process p (polling every 10 ms), or -1 after 5 s */
  const until = async (p: ServiceProcess, check: (flags: Record<string, unknown>) => boolean): Promise<number> => {
    const start = performance.now()
    while (performance.now() - start < 5000) {
      if (check(await flagsOf(p))) return performance.now() - start
      await Bun.sleep(10)
    }
    return -1
  }

  test('create, PATCH and delete on A are seen by B within a second', async () => {
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
