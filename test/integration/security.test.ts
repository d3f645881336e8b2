// Keys never reach the logs, even at trace level and on every error path; rate limits answer 429 in the
// error shape.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { runCli, spawnService, type ServiceProcess } from '../helpers/spawn-service'

describe('keys in logs', () => {
  let service: ServiceProcess
  let env: Record<string, string>
  beforeAll(async () => {
    env = { ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), LOG_LEVEL: 'trace', FLUSH_INTERVAL_MS: '50' }
    service = await spawnService(env)
  })
  afterAll(() => service?.stop())

  test('a full run at trace level logs no key, good or bad', async () => {
    const created = await runCli(['personal-key', 'create', '--label', 'logged?'], env)
    const cliKey = JSON.parse(created.stdout).key as string
    const badKeys = ['phx_this_is_a_bad_personal_key_000', 'phc_this_is_a_bad_project_key_000']
    const auth = (key: string) => ({ authorization: `Bearer ${key}` })
    const calls: [string, RequestInit][] = [
      ['/capture/', { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'e', distinct_id: 'd' }) }],
      ['/capture/', { method: 'POST', body: JSON.stringify({ api_key: badKeys[1], event: 'e', distinct_id: 'd' }) }],
      ['/capture/', { method: 'POST', body: JSON.stringify({ api_key: PERSONAL_KEY, event: 'e', distinct_id: 'd' }) }],
      ['/capture/', { method: 'POST', body: JSON.stringify({ api_key: badKeys[0], project_id: 1, event: 'e', distinct_id: 'd' }) }],
      [`/e/?token=${PROJECT_KEY}`, { method: 'POST', body: '{"broken' }],
      ['/decide/?v=3', { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: 'd' }) }],
      ['/decide/?v=3', { method: 'POST', body: JSON.stringify({ token: badKeys[1], distinct_id: 'd' }) }],
      ['/api/projects/', { headers: auth(PERSONAL_KEY) }],
      ['/api/projects/', { headers: auth(cliKey) }],
      ['/api/projects/', { headers: auth(badKeys[0]) }],
      [`/api/projects/?personal_api_key=${badKeys[0]}`, {}],
      ['/api/projects/1/event_definitions/nope/', { headers: auth(PERSONAL_KEY) }],
      [`/api/feature_flag/local_evaluation?token=${PROJECT_KEY}`, { headers: auth(PERSONAL_KEY) }],
      [`/api/feature_flag/local_evaluation?token=${badKeys[1]}`, { headers: auth(badKeys[0]) }],
      [`/array/${PROJECT_KEY}/config`, {}],
    ]
    for (const [path, init] of calls) await fetch(`${service.url}${path}`, init)
    await Bun.sleep(500)
    const logs = service.logs() + created.stderr
    expect(logs.length).toBeGreaterThan(1000) // trace logging did log the requests
    for (const key of [PROJECT_KEY, PERSONAL_KEY, cliKey, ...badKeys]) expect(logs).not.toContain(key)
  })
})

describe('rate limits', () => {
  let service: ServiceProcess
  beforeAll(async () => {
    const env = { ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), RATE_LIMIT_API_PER_MINUTE: '5', RATE_LIMIT_DECIDE_PER_SECOND: '3' }
    service = await spawnService(env)
  })
  afterAll(() => service?.stop())

  test('the private API: per personal key, 429 in the error shape with Retry-After', async () => {
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 7; i++) {
      last = await fetch(`${service.url}/api/projects/`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })
      statuses.push(last.status)
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200])
    expect(statuses.slice(5)).toEqual([429, 429])
    expect(await last!.json()).toMatchObject({ type: 'throttled_error', code: 'throttled', attr: null })
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0)
    // capture is not rate limited
    const capture = await fetch(`${service.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'e', distinct_id: 'd' }) })
    expect(capture.status).toBe(200)
  })

  test('/decide: per project token', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) {
      const r = await fetch(`${service.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: `d${i}` }) })
      statuses.push(r.status)
      if (r.status === 429) expect(await r.json()).toMatchObject({ type: 'throttled_error', attr: null })
    }
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(3)
    expect(statuses).toContain(429)
  })
})
