// What an operator reads at 3 a.m.: every 5xx logged at error with its request id, route, status, duration and
// reason; with LOG_REQUESTS=true one access line per request. A real process, with ClickHouse unreachable.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { freePort, spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PERSONAL_KEY } from '../helpers/stack'

describe('request logs', () => {
  let svc: ServiceProcess
  beforeAll(async () => {
    const env = await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })
    svc = await spawnService({ ...env, CLICKHOUSE_URL: `http://127.0.0.1:${await freePort()}/phog`, LOG_REQUESTS: 'true', LOG_LEVEL: 'info' })
  })
  afterAll(async () => {
    await svc?.stop()
  })

  const lines = () => svc.logs().trim().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))

  test('a 5xx is logged at error with request id, route, status, duration and reason; each request has an access line', async () => {
    const r = await fetch(`${svc.url}/api/projects/@current/events/`, { headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'x-request-id': 'req-5xx-1' } })
    expect(r.status).toBe(503)
    await fetch(`${svc.url}/_health`, { headers: { 'x-request-id': 'req-health-1' } })
    await Bun.sleep(300)
    const failure = lines().find((l) => l.requestId === 'req-5xx-1' && l.level === 'error')
    expect(failure).toMatchObject({ route: '/api/projects/:project_id/events/', status: 503, method: 'GET', code: expect.any(String) })
    expect(failure.durationMs).toBeNumber()
    expect(failure.msg).toContain('request answered 503')
    const access = lines().find((l) => l.requestId === 'req-health-1')
    expect(access).toMatchObject({ level: 'info', msg: 'request', method: 'GET', route: '/_health', status: 200 })
    // no key in any line, and no duplicate keys in the "listening" line
    expect(svc.logs()).not.toContain(PERSONAL_KEY)
    // ClickHouse unreachable at boot is a warning naming it, without its credentials
    expect(lines().some((l) => l.level === 'warn' && l.msg.startsWith('ClickHouse (CLICKHOUSE_URL) is not reachable') && l.clickhouse.endsWith('/phog'))).toBe(true)
    const listening = svc.logs().split('\n').find((l) => l.includes('"listening"'))!
    expect(listening.match(/"pid"/g)).toHaveLength(1)
  })
})
