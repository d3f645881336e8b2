// Two real server processes on one Postgres: a personal key revoked or rolled through one is refused by the other
// from its next request; a project token reset through one is refused by the other within KEY_CHANGE_CHECK_MS on
// capture, /decide, /flags, remote config and local evaluation.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { tempDir } from '../helpers/temp'

const CHECK_MS = 1000

describe('key changes across processes', () => {
  let a: ServiceProcess
  let b: ServiceProcess
  beforeAll(async () => {
    const env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
    a = await spawnService({ ...env, KEY_CHANGE_CHECK_MS: String(CHECK_MS) })
    b = await spawnService({ ...env, DATA_DIR: tempDir('phog-keys-b-'), KEY_CHANGE_CHECK_MS: String(CHECK_MS) })
  })
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()])
  })

  const api = (server: ServiceProcess, path: string, key: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(init.headers ?? {}) } })

  test('revoke and roll through A: B refuses the old value from its next request', async () => {
    const created = (await (await api(a, '/api/personal_api_keys/', PERSONAL_KEY, { method: 'POST', body: JSON.stringify({ label: 'k', scopes: ['*'] }) })).json()) as any
    expect((await api(b, '/api/projects/', created.value)).status).toBe(200)
    const rolled = (await (await api(a, `/api/personal_api_keys/${created.id}/roll/`, PERSONAL_KEY, { method: 'POST' })).json()) as any
    expect((await api(b, '/api/projects/', created.value)).status).toBe(401)
    expect((await api(b, '/api/projects/', rolled.value)).status).toBe(200)
    expect((await api(a, `/api/personal_api_keys/${created.id}/`, PERSONAL_KEY, { method: 'DELETE' })).status).toBe(204)
    const refused = await api(b, '/api/projects/', rolled.value)
    expect(refused.status).toBe(401)
    expect(((await refused.json()) as any).code).toBe('invalid_personal_api_key')
  })

  test('reset through A: every token-checking endpoint of B refuses the old token within KEY_CHANGE_CHECK_MS', async () => {
    const checks: Record<string, (token: string) => Promise<Response>> = {
      capture: (token) => fetch(`${b.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: token, event: 'e', distinct_id: 'd' }) }),
      decide: (token) => fetch(`${b.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ token, distinct_id: 'd' }) }),
      flags: (token) => fetch(`${b.url}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token, distinct_id: 'd' }) }),
      remoteConfig: (token) => fetch(`${b.url}/array/${token}/config`),
      localEvaluation: (token) => api(b, `/api/feature_flag/local_evaluation?token=${token}`, PERSONAL_KEY),
    }
    for (const [name, check] of Object.entries(checks)) expect([name, (await check(PROJECT_KEY)).status]).toEqual([name, 200])
    const reset = await api(a, '/api/projects/1/reset_token/', PERSONAL_KEY, { method: 'PATCH' })
    expect(reset.status).toBe(200)
    const fresh = ((await reset.json()) as any).api_token as string
    const resetAt = Date.now()
    const until = resetAt + CHECK_MS + 1000 // the check interval, plus a second for a loaded machine
    for (;;) {
      if ((await checks.capture(PROJECT_KEY)).status === 401) break
      expect(Date.now()).toBeLessThan(until)
      await Bun.sleep(20)
    }
    for (const [name, check] of Object.entries(checks)) {
      expect([name, (await check(PROJECT_KEY)).status]).toEqual([name, name === 'remoteConfig' ? 404 : 401])
      expect([name, (await check(fresh)).status]).toEqual([name, 200])
    }
  })
})
