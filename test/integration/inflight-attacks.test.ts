// Attacks on the bytes-in-flight budget (MAX_INFLIGHT_BODY_BYTES) over real HTTP: a budget meant to bound memory
// must not be held by clients that send nothing, nor lock out the others.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect, type Socket } from 'node:net'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PROJECT_KEY } from '../helpers/stack'

/** A connection that declares a body of `declared` bytes, sends its headers and then nothing. */
function silentBody(port: number, localAddress: string, declared: number, path = '/batch/') {
  let answer = ''
  const socket: Socket = connect({ port, host: '127.0.0.1', localAddress })
  socket.on('error', () => undefined)
  socket.on('data', (d) => (answer += d.toString('latin1')))
  socket.on('connect', () => {
    socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n{"api_key":"${PROJECT_KEY}","batch":[`)
  })
  return { status: () => answer.split('\r\n')[0] ?? '', destroy: () => socket.destroy() }
}

function gauge(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\d+)`, 'm').exec(text)?.[1] ?? NaN)
}

describe('bytes in flight: what holds the budget', () => {
  let svc: ServiceProcess
  beforeAll(async () => {
    svc = await spawnService({ ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), LOG_LEVEL: 'warn', MAX_BODY_BYTES: String(20 * 1024 * 1024) })
  })
  afterAll(() => svc?.stop())

  test('13 connections declaring 19.7 MiB bodies (the whole budget) and sending nothing do not lock out other clients', async () => {
    // together they fill the 256 MiB budget to the byte
    const declared = Math.floor((256 * 1024 * 1024) / 13)
    // five addresses, at most three each (one address's share is a quarter of the 256 MiB budget)
    const holders = Array.from({ length: 13 }, (_, i) => silentBody(svc.port, `127.0.0.${2 + (i % 5)}`, declared))
    await Bun.sleep(1500)
    const held = gauge(await (await fetch(`${svc.url}/metrics`)).text(), 'http_inflight_body_bytes')
    // a legitimate client on another address, with a small and a 1 MB batch
    const started = performance.now()
    const statuses: number[] = []
    for (const size of [1, 1000]) {
      const batch = Array.from({ length: size }, (_, i) => ({ event: 'legit', distinct_id: `u${i}`, properties: { pad: 'x'.repeat(1000) } }))
      const r = await fetch(`${svc.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) })
      statuses.push(r.status)
    }
    console.log(`[inflight] 13 silent 19.7 MiB bodies: ${held} bytes reserved; a legitimate client's batches answered ${statuses.join(', ')} in ${Math.round(performance.now() - started)} ms`)
    expect(statuses).toEqual([200, 200])
    // nothing was received from the silent ones: nothing of the budget is theirs
    expect(held).toBeLessThan(1024 * 1024)
    expect(holders.map((h) => h.status()).filter((s) => s !== '')).toEqual([])
    for (const h of holders) h.destroy()
    await Bun.sleep(300)
    expect(gauge(await (await fetch(`${svc.url}/metrics`)).text(), 'http_inflight_body_bytes')).toBe(0)
  }, 60_000)

  test('1,030 connections declaring 256 KiB bodies (read at once, reserved up front) and sending nothing do not lock out other clients', async () => {
    const holders = Array.from({ length: 1030 }, (_, i) => silentBody(svc.port, `127.0.0.${2 + (i % 5)}`, 256 * 1024))
    await Bun.sleep(3000)
    const held = gauge(await (await fetch(`${svc.url}/metrics`)).text(), 'http_inflight_body_bytes')
    const started = performance.now()
    const statuses: number[] = []
    for (const size of [1, 1000]) {
      const batch = Array.from({ length: size }, (_, i) => ({ event: 'legit', distinct_id: `u${i}`, properties: { pad: 'x'.repeat(100) } }))
      const r = await fetch(`${svc.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) })
      statuses.push(r.status)
    }
    const decide = await fetch(`${svc.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'u1' }) })
    statuses.push(decide.status)
    console.log(`[inflight] 1,030 silent 256 KiB bodies: ${held} bytes reserved; a legitimate client answered ${statuses.join(', ')} in ${Math.round(performance.now() - started)} ms`)
    expect(statuses).toEqual([200, 200, 200])
    // declared lengths hold at most half the budget; the rest were read chunk by chunk
    expect(held).toBeLessThanOrEqual(128 * 1024 * 1024 + 64 * 1024)
    const streamed = Number(/^http_bodies_streamed_declared_share_full_total (\d+)/m.exec(await (await fetch(`${svc.url}/metrics`)).text())?.[1])
    expect(streamed).toBeGreaterThanOrEqual(1030 - 512)
    for (const h of holders) h.destroy()
    await Bun.sleep(500)
    expect(gauge(await (await fetch(`${svc.url}/metrics`)).text(), 'http_inflight_body_bytes')).toBe(0)
  }, 60_000)

  test('1,030 silent 64 KiB sign-in bodies from one address hold that address\'s share, not every client\'s sign-in', async () => {
    const holders = Array.from({ length: 1030 }, () => silentBody(svc.port, '127.0.0.7', 64 * 1024, '/api/login/'))
    await Bun.sleep(3000)
    const signIn = (localAddress: string) =>
      new Promise<string>((resolve) => {
        let answer = ''
        const body = JSON.stringify({ email: 'someone@example.com', password: 'not the password' })
        const socket = connect({ port: svc.port, host: '127.0.0.1', localAddress })
        socket.on('error', () => resolve(answer))
        socket.on('data', (d) => {
          answer += d.toString('latin1')
          socket.destroy()
          resolve(answer.split('\r\n')[0] ?? '')
        })
        socket.on('connect', () => socket.write(`POST /api/login/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`))
      })
    const legitimate = await signIn('127.0.0.8')
    const attacker = await signIn('127.0.0.7')
    const refused = holders.filter((h) => h.status().startsWith('HTTP/1.1 503')).length
    console.log(`[inflight] 1,030 silent sign-in bodies from one address: ${refused} refused; another address's sign-in: ${legitimate}; the attacker's own: ${attacker}`)
    // before: every sign-in body counted under one unknown address, and the legitimate sign-in was 503
    expect(legitimate).toBe('HTTP/1.1 401 Unauthorized')
    expect(attacker).toStartWith('HTTP/1.1 503')
    expect(refused).toBeGreaterThan(0)
    for (const h of holders) h.destroy()
    await Bun.sleep(500)
    expect(gauge(await (await fetch(`${svc.url}/metrics`)).text(), 'http_inflight_body_bytes')).toBe(0)
  }, 60_000)
})
