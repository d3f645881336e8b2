// HTTP edges as real clients meet them, over real sockets: a 413 read by a client that writes its whole body
// first, routing whatever the Host header, 405 with Allow, CORS preflight on the private API, a uuid that is
// not a UUID.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

/** Send raw bytes (headers, then the body in chunks, without reading), then read the whole answer. */
async function raw(port: number, head: string, body: Uint8Array = new Uint8Array(0)): Promise<{ status: number; headers: string; body: string }> {
  const received: Uint8Array[] = []
  let closed = false
  let resolveDone: () => void
  const done = new Promise<void>((r) => (resolveDone = () => ((closed = true), r())))
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data(_s, d) {
        received.push(new Uint8Array(d))
      },
      close() {
        resolveDone()
      },
      error() {
        resolveDone()
      },
      drain() {},
    },
  })
  socket.write(head)
  const CHUNK = 256 * 1024
  // a server that closes without reading the rest (no lingering close) ends the write with a reset
  for (let off = 0; off < body.length && !closed; ) {
    const wrote = socket.write(body.subarray(off, off + CHUNK))
    if (wrote <= 0) await Bun.sleep(1)
    off += Math.max(0, wrote)
  }
  socket.flush()
  await Promise.race([done, Bun.sleep(20_000)])
  socket.end()
  const text = Buffer.concat(received).toString('latin1')
  const split = text.indexOf('\r\n\r\n')
  return { status: Number(text.slice(9, 12)), headers: text.slice(0, split).toLowerCase(), body: text.slice(split + 4) }
}

describe('HTTP edges', () => {
  let svc: ServiceProcess
  beforeAll(async () => {
    svc = await spawnService(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' }))
  })
  afterAll(async () => {
    await svc?.stop()
  })

  for (const path of ['/batch/', '/capture/']) {
    test(`${path}: a client that writes 21 MB before reading still gets the 413 error body`, async () => {
      const body = new Uint8Array(21 * 1024 * 1024).fill(0x20)
      const r = await raw(svc.port, `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nOrigin: https://app.example\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`, body)
      expect(r.status).toBe(413)
      expect(JSON.parse(r.body.includes('{') ? r.body.slice(r.body.indexOf('{'), r.body.lastIndexOf('}') + 1) : '{}')).toMatchObject({ type: 'client_error', code: 'request_too_large' })
      expect(r.headers).toContain('access-control-allow-origin: https://app.example')
    })
  }

  test('routes on the real path whatever the Host header (`Host: api` used to make every route 404)', async () => {
    for (const host of ['api', 'a', 'x.y']) {
      expect((await raw(svc.port, `GET /_health HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)).status).toBe(200)
      const api = await raw(svc.port, `GET /api/projects/ HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${PERSONAL_KEY}\r\nConnection: close\r\n\r\n`)
      expect(api.status).toBe(200)
      // a proxy rule on /api/ cannot be bypassed with a crafted path: /xapi/... is not the private API
      expect((await raw(svc.port, `GET /xapi/projects/ HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)).status).toBe(404)
    }
  })

  test('a known path with a method it does not serve: 405 with Allow and the error body; an unknown path: 404', async () => {
    const r = await fetch(`${svc.url}/api/projects/@current/feature_flags/`, { method: 'DELETE', headers: { authorization: `Bearer ${PERSONAL_KEY}` } })
    expect(r.status).toBe(405)
    expect(r.headers.get('allow')).toBe('GET, HEAD, POST')
    expect(await r.json()).toEqual({ type: 'invalid_request', code: 'method_not_allowed', detail: 'Method "DELETE" not allowed.', attr: null })
    const health = await fetch(`${svc.url}/_health`, { method: 'POST' })
    expect(health.status).toBe(405)
    expect(health.headers.get('allow')).toBe('GET, HEAD')
    const unknown = await fetch(`${svc.url}/api/nothing-here/`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { code: string }).code).toBe('not_found')
  })

  test('CORS preflight on the private API allows Authorization; the answers carry CORS headers', async () => {
    const pre = await fetch(`${svc.url}/api/projects/@current/feature_flags/`, {
      method: 'OPTIONS',
      headers: { origin: 'https://admin.example', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'authorization, content-type' },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://admin.example')
    expect(pre.headers.get('access-control-allow-methods')).toContain('PATCH')
    expect(pre.headers.get('access-control-allow-headers')).toContain('authorization')
    const get = await fetch(`${svc.url}/api/projects/`, { headers: { origin: 'https://admin.example', authorization: `Bearer ${PERSONAL_KEY}` } })
    expect(get.status).toBe(200)
    expect(get.headers.get('access-control-allow-origin')).toBe('https://admin.example')
  })

  test('an event whose uuid is present but not a UUID is refused with 400; an empty one counts as absent', async () => {
    const send = (uuid: unknown) => fetch(`${svc.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'e', distinct_id: 'd', uuid }) })
    const bad = await send('not-a-uuid')
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({ type: 'validation_error', code: 'invalid_payload', detail: 'Invalid payload: Event field "uuid" is not a valid UUID!', attr: null })
    expect((await send('')).status).toBe(200)
    expect((await send(crypto.randomUUID())).status).toBe(200)
  })
})
