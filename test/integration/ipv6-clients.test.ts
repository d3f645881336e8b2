// An IPv6 client is usually given a /64: 2^64 addresses to spread its requests over. The per-address budgets count
// an IPv6 address by its /64 (behind a trusted proxy, the X-Forwarded-For entry), so that rotating addresses within
// it dodges neither the sign-in limit per address nor an address's share of the bytes in flight.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PROJECT_KEY } from '../helpers/stack'

/** A body declared `declared` long sent whole but its last 64 KiB, from `forwardedFor`; its answer, if any. */
function holdBody(port: number, forwardedFor: string, declared: number) {
  let answer = ''
  let closed = false
  const socket: Socket = connect({ port, host: '127.0.0.1' })
  socket.on('error', () => undefined)
  socket.on('data', (d) => (answer += d.toString('latin1')))
  socket.on('close', () => (closed = true))
  const chunk = Buffer.alloc(1024 * 1024, 0x20)
  socket.on('connect', async () => {
    socket.write(`POST /batch/ HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${forwardedFor}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n{"api_key":"${PROJECT_KEY}","batch":[`)
    for (let left = declared - 64 * 1024; left > 0 && !closed && answer === ''; left -= chunk.length) {
      if (!socket.write(left >= chunk.length ? chunk : chunk.subarray(0, left))) await new Promise((r) => socket.once('drain', r))
    }
  })
  return { status: () => answer.split('\r\n')[0] ?? '', destroy: () => socket.destroy() }
}

describe('IPv6 clients counted by their /64', () => {
  let svc: ServiceProcess
  beforeAll(async () => {
    svc = await spawnService({
      ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })),
      LOG_LEVEL: 'warn',
      TRUST_PROXY: 'true',
      LOGIN_ATTEMPTS_PER_ADDRESS: '5',
      MAX_BODY_BYTES: String(20 * 1024 * 1024),
    })
  })
  afterAll(() => svc?.stop())

  test('sign-in guesses from 12 addresses of one /64 are throttled past the per-address limit', async () => {
    const statuses: number[] = []
    for (let i = 1; i <= 12; i++) {
      const r = await fetch(`${svc.url}/api/login/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `2001:db8:0:1::${i.toString(16)}` },
        body: JSON.stringify({ email: `guess-${i}@example.com`, password: 'wrong password here' }),
      })
      statuses.push(r.status)
    }
    console.log(`[ipv6] 12 sign-ins from one /64: ${statuses.join(' ')}`)
    // before: every address its own count, 12 × 401
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401])
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true)
    // another /64 is not held back
    const other = await fetch(`${svc.url}/api/login/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '2001:db8:0:2::1' },
      body: JSON.stringify({ email: 'guess-other@example.com', password: 'wrong password here' }),
    })
    expect(other.status).toBe(401)
  }, 60_000)

  test('10 held 19.5 MB bodies from 10 addresses of one /64 take one address\'s share of the bytes in flight', async () => {
    const holders = Array.from({ length: 10 }, (_, i) => holdBody(svc.port, `2001:db8:0:1::${(i + 100).toString(16)}`, Math.floor(19.5 * 1024 * 1024)))
    // The server's count of refusals is the measure: a client refused while still sending may see its connection
    // reset before it reads the 503 (the unread rest of its body), so its answer can be lost on the way.
    const refusals = async () => {
      const metrics = await (await fetch(`${svc.url}/metrics`)).text()
      return { metrics, refused: Number(/^http_body_budget_refusals_total\{scope="address"\} (\d+)/m.exec(metrics)?.[1] ?? 0) }
    }
    const started = Date.now()
    // until the refusals are in (a share is 64 MiB: at most three of them and part of a fourth fit)
    while ((await refusals()).refused < 6 && Date.now() - started < 25_000) await Bun.sleep(200)
    await Bun.sleep(1000)
    const { metrics, refused } = await refusals()
    const inflight = Number(/^http_inflight_body_bytes (\d+)/m.exec(metrics)?.[1])
    const answered503 = holders.filter((h) => h.status().startsWith('HTTP/1.1 503')).length
    console.log(`[ipv6] 10 bodies from one /64: ${refused} refused (${answered503} 503s read by their clients), ${inflight} bytes in flight`)
    // before: each address its own share, all 10 (195 MB) held
    expect(refused).toBeGreaterThanOrEqual(6)
    expect(answered503).toBeGreaterThanOrEqual(1)
    expect(inflight).toBeLessThanOrEqual(64 * 1024 * 1024)
    for (const h of holders) h.destroy()
  }, 60_000)
})
