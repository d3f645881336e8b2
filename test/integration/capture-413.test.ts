// Capture's 413s, as PostHog's capture answers them: a compressed body expanding past its cap is
// `payload_too_large`; a request holding one event over the per-event cap (1 MiB of JSON) is `event_too_big`,
// refused whole: none of its events is kept (a client told its request was refused may send the rest again).
// The refusal comes before the log, whatever the stores: run on the embedded stores.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { MAX_EVENT_BYTES } from '../../src/capture/normalize'
import { BASE, json, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

function post(stack: Stack, path: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  return stack.app.handle(new Request(`${BASE}${path}`, { method: 'POST', body, headers }))
}

async function storedEvents(stack: Stack, distinctId: string): Promise<any[]> {
  return (await json(stack.api(`/api/projects/1/events/?limit=1000&distinct_id=${distinctId}`))).results
}

/** Waits for the marker sent after the refused requests: once it is stored, anything kept before it would be too. */
async function afterMarker(stack: Stack, distinctId: string): Promise<any[]> {
  const marker = await post(stack, '/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch: [{ event: 'marker', distinct_id: distinctId }] }))
  expect(marker.status).toBe(200)
  const deadline = Date.now() + 15_000
  let events: any[] = []
  while (Date.now() < deadline) {
    events = await storedEvents(stack, distinctId)
    if (events.some((e) => e.event === 'marker')) return events
    await Bun.sleep(50)
  }
  throw new Error('the marker never arrived')
}

async function rejected(stack: Stack, code: string): Promise<number> {
  const text = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
  const m = new RegExp(`^capture_requests_rejected_total\\{code="${code}"\\} (\\d+)`, 'm').exec(text)
  return m ? Number(m[1]) : 0
}

describe('capture answers 413 as PostHog does', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 50 })
  })
  afterAll(() => stack?.close())

  test('a compressed body expanding past its cap: 413 payload_too_large, in every encoding, nothing kept', async () => {
    const events = [{ event: 'expanding', distinct_id: 'expand-user', properties: { token: PROJECT_KEY, s: 'a'.repeat(3 * 1024 * 1024) } }]
    const text = JSON.stringify(events)
    const gz = gzipSync(text)
    const b64 = Buffer.from(gz).toString('base64')
    const sends: [string, () => Promise<Response>][] = [
      ['gzip magic', () => post(stack, '/batch/', gz, { 'content-type': 'text/plain' })],
      ['gzip header', () => post(stack, '/e/', gz, { 'content-encoding': 'gzip' })],
      ['gzip-js', () => post(stack, '/e/?compression=gzip-js', gz)],
      ['base64 of gzip', () => post(stack, '/capture/', b64)],
      ['form base64 of gzip', () => post(stack, '/e/', `data=${encodeURIComponent(b64)}&compression=gzip-js`, { 'content-type': 'application/x-www-form-urlencoded' })],
      ['GET data=', () => stack.app.handle(new Request(`${BASE}/e/?compression=gzip-js&data=${encodeURIComponent(b64)}`))],
      ['lz64', () => post(stack, '/e/?compression=lz64', LZString.compressToBase64(text))],
    ]
    const before = await rejected(stack, 'payload_too_large')
    for (const [name, send] of sends) {
      const r = await send()
      const body = (await r.json()) as { type: string; code: string; detail: string }
      expect({ name, status: r.status, type: body.type, code: body.code }).toEqual({ name, status: 413, type: 'client_error', code: 'payload_too_large' })
      expect(body.detail).toContain('expands more than')
    }
    expect((await rejected(stack, 'payload_too_large')) - before).toBe(sends.length)
    expect((await afterMarker(stack, 'expand-user')).map((e) => e.event)).toEqual(['marker'])
  })

  test('one event over 1 MiB: 413 event_too_big, alone or in a batch, and none of the request’s events is kept', async () => {
    // random text: gzip cannot shrink it past the expansion ratio
    const blob = Buffer.from(crypto.getRandomValues(new Uint8Array((MAX_EVENT_BYTES * 3) / 4 + 30))).toString('base64')
    const over = (name: string) => ({ event: name, distinct_id: 'big-user', properties: { blob } })
    const small = (name: string) => ({ event: name, distinct_id: 'big-user', properties: { n: 1 } })
    const before = await rejected(stack, 'event_too_big')
    const alone = await post(stack, '/capture/', JSON.stringify({ api_key: PROJECT_KEY, ...over('alone') }))
    expect(alone.status).toBe(413)
    const aloneBody = (await alone.json()) as { type: string; code: string; detail: string }
    expect(aloneBody).toMatchObject({ type: 'client_error', code: 'event_too_big' })
    expect(aloneBody.detail).toContain(`${MAX_EVENT_BYTES} bytes per event`)
    const batch = await post(stack, '/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch: [small('before'), over('in batch'), small('after')] }))
    expect(batch.status).toBe(413)
    expect(((await batch.json()) as { code: string; detail: string }).detail).toContain('Event 2 of 3')
    // the same batch as posthog-js sends it: gzip, an array with the token in each event
    const gz = gzipSync(JSON.stringify([small('gz before'), over('gz'), small('gz after')].map((e) => ({ ...e, properties: { ...e.properties, token: PROJECT_KEY } }))))
    const gzipped = await post(stack, '/e/?compression=gzip-js', gz, { 'content-type': 'text/plain' })
    expect(gzipped.status).toBe(413)
    expect((await gzipped.json()) as object).toMatchObject({ code: 'event_too_big' })
    expect((await rejected(stack, 'event_too_big')) - before).toBe(3)
    // an event just under the cap is kept, as are the small ones of a batch that holds no oversize event
    const fits = await post(stack, '/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch: [small('kept'), { ...small('fits'), properties: { blob: 'x'.repeat(MAX_EVENT_BYTES - 200) } }] }))
    expect(fits.status).toBe(200)
    expect((await afterMarker(stack, 'big-user')).map((e) => e.event).sort()).toEqual(['fits', 'kept', 'marker'])
    // not a drop counted by the stores: nothing was acknowledged, so nothing was dropped
    const metrics = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
    expect(metrics).not.toMatch(/capture_events_total\{outcome="dropped_too_large"\} [1-9]/)
    expect(metrics).toMatch(/capture_events_total\{outcome="accepted"\} [1-9]/)
  })
})
