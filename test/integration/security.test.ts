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
      [`/array/${badKeys[1]}/config.js`, {}],
      ['/flags/?v=2&config=true', { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: 'd' }) }],
      ['/flags/?v=2', { method: 'POST', body: JSON.stringify({ api_key: PERSONAL_KEY, project_id: 1, distinct_id: 'd' }) }],
      [`/flags/definitions?token=${PROJECT_KEY}`, { headers: auth(PERSONAL_KEY) }],
      ['/api/projects/@current/feature_flags/', { method: 'POST', headers: { ...auth(PERSONAL_KEY), 'content-type': 'application/json' }, body: JSON.stringify({ key: 'logged-flag', filters: { groups: [{ rollout_percentage: 50 }] } }) }],
      ['/api/projects/@current/feature_flags/', { method: 'POST', headers: { ...auth(PERSONAL_KEY), 'content-type': 'application/json' }, body: '{"key": "bad flag"' }],
      ['/api/projects/@current/feature_flags/?search=x', { headers: auth(cliKey) }],
      ['/api/projects/@current/events/?distinct_id=d', { headers: auth(PERSONAL_KEY) }],
      ['/api/projects/@current/persons/?distinct_id=d', { headers: auth(PERSONAL_KEY) }],
      ['/api/projects/2/persons/', { headers: auth(PERSONAL_KEY) }],
      ['/api/projects/@current/event_definitions/?search=e', { headers: auth(cliKey) }],
    ]
    for (const [path, init] of calls) await fetch(`${service.url}${path}`, init)
    // the same keys escaped: JSON `\u005f` (anywhere in the key) in bodies, `%5F` (once or twice) in paths and queries
    const jsonEscaped = (key: string) => [key.replace('_', '\\u005f'), `\\u0070${key.slice(1, -1)}\\u00${key.charCodeAt(key.length - 1).toString(16)}`]
    const urlEscaped = (key: string) => [key.replace('_', '%5F'), key.replace('_', '%255F')]
    const keys = [PROJECT_KEY, PERSONAL_KEY, cliKey, ...badKeys]
    for (const key of keys) {
      for (const form of jsonEscaped(key)) {
        const event = `{"api_key":"${form}","project_id":1,"event":"${form}","distinct_id":"${form}","properties":{"$groups":{"${form}":"${form}"},"${form}":"${form}"}}`
        await fetch(`${service.url}/capture/`, { method: 'POST', body: event })
        await fetch(`${service.url}/batch/`, { method: 'POST', body: `{"api_key":"${form}","batch":[${event}]}` })
        await fetch(`${service.url}/e/`, { method: 'POST', body: `{"token":"${form}","event":"e","distinct_id":"d"` })
        await fetch(`${service.url}/decide/?v=3`, { method: 'POST', body: `{"token":"${form}","distinct_id":"${form}","groups":{"${form}":"${form}"}}` })
        await fetch(`${service.url}/flags/?v=2`, { method: 'POST', body: `{"api_key":"${form}","project_id":1,"distinct_id":"d"}` })
        const json = { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' }
        await fetch(`${service.url}/api/projects/@current/feature_flags/`, { method: 'POST', headers: json, body: `{"key":"${form}","name":"${form}","filters":{"groups":[{"properties":[{"key":"${form}","value":"${form}","type":"person"}]}]}}` })
        await fetch(`${service.url}/api/projects/@current/feature_flags/`, { method: 'POST', headers: json, body: `{"key":"${form}` })
      }
      for (const form of urlEscaped(key)) {
        for (const path of [`/array/${form}/config`, `/array/${form}/config.js`, `/e/?token=${form}`, `/api/projects/${form}/`, `/api/feature_flag/local_evaluation?token=${form}`, `/api/projects/?personal_api_key=${form}`, `/nowhere/${form}`]) {
          await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${form}` } })
        }
      }
    }
    await Bun.sleep(1500) // the events flushed and learned (group types, definitions) too
    const logs = service.logs() + created.stderr
    expect(logs.length).toBeGreaterThan(1000) // trace logging did log the requests
    for (const key of keys) expect(logs).not.toContain(key)
    // and no escaped form either: what follows each key's prefix, decoded, appears nowhere
    const decoded = logs.replace(/\\+u([0-9a-fA-F]{4})|%(?:25)*([0-9a-fA-F]{2})/g, (_, u, pct) => String.fromCharCode(parseInt(u ?? pct, 16)))
    for (const key of keys) expect(decoded).not.toContain(key.slice(4))
  })
})

describe('rate limits', () => {
  let service: ServiceProcess
  let secondKey: string
  let secondToken: string
  beforeAll(async () => {
    const env = { ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), RATE_LIMIT_API_PER_MINUTE: '5', RATE_LIMIT_DECIDE_PER_SECOND: '3' }
    service = await spawnService(env)
    // another user's key: the limit counts per user, so a second key of the same user would share its budget
    expect((await runCli(['user', 'create', '--email', 'second@example.com'], env)).code).toBe(0)
    const key = await runCli(['personal-key', 'create', '--label', 'second', '--email', 'second@example.com'], env)
    expect(key.code).toBe(0)
    secondKey = JSON.parse(key.stdout).key
    const project = await runCli(['project', 'create', '--name', 'Second project'], env)
    expect(project.code).toBe(0)
    secondToken = JSON.parse(project.stdout).api_token
  })
  afterAll(() => service?.stop())

  const projects = (key: string) => fetch(`${service.url}/api/projects/`, { headers: { authorization: `Bearer ${key}` } })
  const decide = (token: string, distinctId: string) =>
    fetch(`${service.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ token, distinct_id: distinctId }) })

  /** A 429 in the error shape, with a Retry-After in whole seconds. */
  async function expectThrottled(r: Response) {
    expect(r.status).toBe(429)
    const body = (await r.json()) as { type: string; code: string; detail: string; attr: unknown }
    expect(Object.keys(body).sort()).toEqual(['attr', 'code', 'detail', 'type'])
    expect(body).toMatchObject({ type: 'throttled_error', code: 'throttled', attr: null })
    expect(typeof body.detail).toBe('string')
    expect(body.detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds?\.$/)
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
  }

  test('the private API: per personal key, 429 in the error shape with Retry-After', async () => {
    const statuses: number[] = []
    let last: Response | undefined
    for (let i = 0; i < 7; i++) {
      last = await projects(PERSONAL_KEY)
      statuses.push(last.status)
    }
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200])
    expect(statuses.slice(5)).toEqual([429, 429])
    await expectThrottled(last!)
    // capture is not rate limited
    const capture = await fetch(`${service.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'e', distinct_id: 'd' }) })
    expect(capture.status).toBe(200)
  })

  test('the private API: a throttled user does not throttle another user’s key, on any private route', async () => {
    await expectThrottled(await projects(PERSONAL_KEY)) // still throttled from the test above
    const second = await projects(secondKey)
    expect(second.status).toBe(200)
    expect(((await second.json()) as { count: number }).count).toBeGreaterThan(0)
    for (const path of ['/api/projects/1/feature_flags/', '/api/projects/1/event_definitions/', '/api/projects/1/events/?limit=1']) {
      const r = await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${secondKey}` } })
      expect({ path, status: r.status }).toEqual({ path, status: 200 })
      await expectThrottled(await fetch(`${service.url}${path}`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } }))
    }
    // the second user has its own budget of 5: its 5th call is answered, its 6th throttled
    expect((await projects(secondKey)).status).toBe(200)
    await expectThrottled(await projects(secondKey))
    // the query-string key counts against the same key's budget
    await expectThrottled(await fetch(`${service.url}/api/projects/?personal_api_key=${secondKey}`))
  })

  test('/decide: per project token', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) {
      const r = await decide(PROJECT_KEY, `d${i}`)
      statuses.push(r.status)
      if (r.status === 429) await expectThrottled(r)
    }
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(3)
    expect(statuses).toContain(429)
  })

  test('/decide: a throttled project token does not throttle another project’s token; /flags shares the token’s budget', async () => {
    const flags = (token: string) => fetch(`${service.url}/flags/?v=2`, { method: 'POST', body: JSON.stringify({ token, distinct_id: 'someone' }) })
    // the server learns the token of a project another process created within a second (a miss reloads the
    // keys at most once a second)
    let warm = 0
    for (let i = 0; i < 30 && warm !== 200; i++) {
      warm = (await decide(secondToken, 'warm-up')).status
      if (warm !== 200) await Bun.sleep(100)
    }
    expect(warm).toBe(200)
    // drain the first token's bucket (3 a second) until it answers 429
    let throttled: Response | undefined
    for (let i = 0; i < 20 && !throttled; i++) {
      const r = await decide(PROJECT_KEY, `drain-${i}`)
      if (r.status === 429) throttled = r
      else expect(r.status).toBe(200)
    }
    expect(throttled).toBeDefined()
    await expectThrottled(throttled!)
    await expectThrottled(await flags(PROJECT_KEY))
    const other = await decide(secondToken, 'someone')
    expect(other.status).toBe(200)
    expect(await other.json()).toMatchObject({ featureFlags: {}, errorsWhileComputingFlags: false })
    expect((await flags(secondToken)).status).toBe(200)
  })
})
