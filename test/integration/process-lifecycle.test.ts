// The service as `npm start` runs it, over real HTTP: what Bun's own server does before our code runs
// (body limits), and what a SIGTERM leaves behind.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sharedClickHouse } from '../helpers/shared-servers'
import { freshDataDir, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'

const MAX = 100_000
const TOO_LARGE = { type: 'client_error', code: 'request_too_large', detail: 'Request too large.', attr: null }

function oversizedEvent(): string {
  return JSON.stringify({ api_key: PROJECT_KEY, event: 'big', distinct_id: 'a', properties: { blob: 'x'.repeat(MAX * 2) } })
}

/** A body with no Content-Length: sent chunked, so only reading it tells its size. */
function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  let offset = 0
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close()
      controller.enqueue(bytes.subarray(offset, offset + 16_384))
      offset += 16_384
    },
  })
}

describe('over real HTTP', () => {
  let service: ServiceProcess
  beforeAll(async () => {
    service = await spawnService({
      DATA_DIR: await freshDataDir('embedded'),
      INIT_PROJECT_API_KEY: PROJECT_KEY,
      INIT_PERSONAL_API_KEY: PERSONAL_KEY,
      MAX_BODY_BYTES: String(MAX),
      LOG_LEVEL: 'warn',
    })
  })
  afterAll(async () => {
    await service?.kill()
  })

  for (const path of ['/capture/', '/batch/', '/e/', '/decide/?v=3', '/flags/?v=2']) {
    test(`an oversized body on ${path} gets the 413 error body with CORS headers, declared or chunked`, async () => {
      for (const body of [oversizedEvent(), chunked(oversizedEvent())]) {
        const r = await fetch(`${service.url}${path}`, { method: 'POST', body, headers: { origin: 'https://app.example.com' } })
        expect(r.status).toBe(413)
        expect(await r.json()).toEqual(TOO_LARGE)
        expect(r.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
      }
    })
  }

  test('a chunked body within the cap is read whole', async () => {
    const event = { api_key: PROJECT_KEY, event: 'chunked', distinct_id: 'c', properties: { blob: 'y'.repeat(MAX / 2) } }
    const r = await fetch(`${service.url}/capture/`, { method: 'POST', body: chunked(JSON.stringify(event)) })
    expect(r.status).toBe(200)
    expect(await r.json()).toEqual({ status: 1 })
  })

  test('the private API refuses an oversized body with the same error', async () => {
    const r = await fetch(`${service.url}/api/projects/@current/feature_flags/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'big', name: 'x'.repeat(MAX * 2) }),
    })
    expect(r.status).toBe(413)
    expect(await r.json()).toEqual(TOO_LARGE)
  })

  test('the server still serves after refusing them', async () => {
    const r = await fetch(`${service.url}/capture/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: PROJECT_KEY, event: 'after', distinct_id: 'a' }),
    })
    expect(r.status).toBe(200)
  })
})

describe('SIGTERM', () => {
  test('flushes every acknowledged event into ClickHouse before the process exits', async () => {
    const ch = await sharedClickHouse()
    const database = `sigterm_${Date.now()}`
    // a flush interval far beyond the test: only the shutdown can have written the events
    const service = await spawnService({
      DATA_DIR: await freshDataDir('embedded'),
      CLICKHOUSE_URL: `${ch.url}/${database}`,
      INIT_PROJECT_API_KEY: PROJECT_KEY,
      FLUSH_INTERVAL_MS: '600000',
      LOG_LEVEL: 'warn',
    })
    const batch = Array.from({ length: 50 }, (_, i) => ({ event: 'before shutdown', properties: { distinct_id: `user-${i}` } }))
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${service.url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) })
      expect(r.status).toBe(200)
    }
    expect((await ch.query(`SELECT count() FROM ${database}.events`)).trim()).toBe('0')
    expect(await service.stop()).toBe(0)
    expect((await ch.query(`SELECT count() FROM ${database}.events WHERE event = 'before shutdown'`)).trim()).toBe('200')
  })

  test('with SHUTDOWN_GRACE_MS, keeps serving while /_ready answers 503 draining, then exits cleanly', async () => {
    const service = await spawnService({
      DATA_DIR: await freshDataDir('embedded'),
      INIT_PROJECT_API_KEY: PROJECT_KEY,
      SHUTDOWN_GRACE_MS: '2000',
      LOG_LEVEL: 'warn',
    })
    const exited = service.stop()
    await Bun.sleep(300)
    const ready = await fetch(`${service.url}/_ready`)
    expect(ready.status).toBe(503)
    expect(((await ready.json()) as { checks: Record<string, string> }).checks.server).toBe('draining')
    const r = await fetch(`${service.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'late', distinct_id: 'a' }) })
    expect(r.status).toBe(200)
    expect(await exited).toBe(0)
  })
})
