// Session replay end to end through the HTTP surface: posthog-js's /s/ bodies in every encoding, the recordings list
// and its filters, the snapshots read back verbatim, DELETE, a person's erasure, another project's 404, hostile
// bodies (a gzip bomb, a 10 KB session id). On the embedded stores, and on ClickHouse + real Postgres.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { BASE, json, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const T0 = Date.now() - 60_000

function post(stack: Stack, path: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  return stack.app.handle(new Request(`${BASE}${path}`, { method: 'POST', body, headers }))
}

/** rrweb events as posthog-js records them, a compressed full snapshot (`cv`) included. */
function rrweb(offset: number, url = 'https://shop.example/cart') {
  return [
    { type: 4, data: { href: url, width: 1280, height: 720 }, timestamp: T0 + offset },
    { type: 2, data: '\u001f\u008b\u0008\u0000\u0000\u0000\u0000\u0000\u0000\u0003«V', timestamp: T0 + offset + 1, cv: '2024-10' },
    { type: 3, data: { source: 2, type: 2, id: 5, x: 10, y: 20 }, timestamp: T0 + offset + 1000 },
    { type: 3, data: { source: 5, text: 'hello', isChecked: false, id: 7 }, timestamp: T0 + offset + 2000 },
    { type: 6, data: { plugin: 'rrweb/console@1', payload: { level: 'error', payload: ['boom'] } }, timestamp: T0 + offset + 2500 },
  ]
}

function snapshot(sessionId: string, events: unknown[], distinctId = 'replay-user', windowId = 'w-1') {
  return { event: '$snapshot', properties: { $snapshot_data: events, $session_id: sessionId, $window_id: windowId, $snapshot_bytes: 100, distinct_id: distinctId, token: PROJECT_KEY, $lib: 'web' } }
}

async function waitFor<T>(check: () => Promise<T | null>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== null) return value
    if (Date.now() > deadline) throw new Error('timed out')
    await Bun.sleep(50)
  }
}

const recording = (stack: Stack, id: string) =>
  waitFor(async () => {
    const r = await stack.api(`/api/projects/1/session_recordings/${id}/`)
    return r.status === 200 ? ((await r.json()) as any) : null
  })

for (const choice of [
  { postgres: 'embedded', clickhouse: 'embedded' },
  { postgres: 'real', clickhouse: 'real' },
] as { postgres: StoreChoice; clickhouse: StoreChoice }[]) {
  describe(`session replay on ${choice.clickhouse === 'real' ? 'ClickHouse + Postgres' : 'the embedded stores'}`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack(choice, { FLUSH_INTERVAL_MS: 50 })
    })
    afterAll(() => stack?.close())

    test('every encoding posthog-js sends is stored, and the snapshots come back verbatim', async () => {
      const body = (id: string) => JSON.stringify([snapshot(id, rrweb(0))])
      const cases: [string, () => Promise<Response>][] = [
        ['enc-json', () => post(stack, '/s/', body('enc-json'), { 'content-type': 'application/json' })],
        ['enc-gzip-js', () => post(stack, '/s/?compression=gzip-js&ver=1.260.0&_=1', gzipSync(body('enc-gzip-js')), { 'content-type': 'text/plain' })],
        ['enc-gzip-magic', () => post(stack, '/s/?_=1', gzipSync(body('enc-gzip-magic')), { 'content-type': 'text/plain' })],
        ['enc-base64-form', () => post(stack, '/s/?compression=base64', `data=${encodeURIComponent(Buffer.from(body('enc-base64-form')).toString('base64'))}`, { 'content-type': 'application/x-www-form-urlencoded' })],
        ['enc-lz64', () => post(stack, '/s?compression=lz64', LZString.compressToBase64(body('enc-lz64')))],
        ['enc-single', () => post(stack, '/s/', JSON.stringify(snapshot('enc-single', rrweb(0))))],
      ]
      for (const [name, send] of cases) {
        const r = await send()
        expect({ name, status: r.status, body: await r.text() }).toEqual({ name, status: 200, body: '{"status":1}' })
      }
      for (const [name] of cases) {
        const rec = await recording(stack, name)
        expect(rec).toMatchObject({ id: name, distinct_id: 'replay-user', click_count: 1, keypress_count: 1, console_error_count: 1, start_url: 'https://shop.example/cart', recording_duration: 3, snapshot_source: 'web' })
        const sources = await json(stack.api(`/api/projects/1/session_recordings/${name}/snapshots`))
        expect(sources.sources).toHaveLength(1)
        expect(sources.sources[0]).toMatchObject({ source: 'blob_v2', blob_key: '0' })
        const blocks = await stack.api(`/api/projects/1/session_recordings/${name}/snapshots?source=blob_v2&start_blob_key=0&end_blob_key=0`)
        expect(blocks.headers.get('content-type')).toContain('application/jsonl')
        const lines = (await blocks.text()).trim().split('\n').map((l) => JSON.parse(l))
        expect(lines).toEqual(rrweb(0).map((e) => ['w-1', e]))
      }
    })

    test('metadata folds across blocks; the list filters and pages', async () => {
      for (let i = 0; i < 3; i++) {
        expect((await post(stack, '/s/', JSON.stringify([snapshot('multi-block', rrweb(i * 3000, i === 0 ? 'https://shop.example/first' : 'https://shop.example/later'), 'lister')]))).status).toBe(200)
      }
      const rec = await waitFor(async () => {
        const r = (await (await stack.api('/api/projects/1/session_recordings/multi-block/')).json()) as any
        return r.click_count === 3 ? r : null
      })
      expect(rec).toMatchObject({ start_url: 'https://shop.example/first', keypress_count: 3, console_error_count: 3, recording_duration: 9 })
      // activity: clicks and inputs 1 s apart within a block, 2 s between blocks: all active but the last gap
      expect(rec.active_seconds).toBeGreaterThanOrEqual(5)
      expect(rec.active_seconds + rec.inactive_seconds).toBe(rec.recording_duration)
      const byUrl = await json(stack.api('/api/projects/1/session_recordings/?url=shop.example/first'))
      expect(byUrl.results.map((r: any) => r.id)).toEqual(['multi-block'])
      const byDistinct = await json(stack.api('/api/projects/1/session_recordings/?distinct_id=lister'))
      expect(byDistinct.results.map((r: any) => r.id)).toEqual(['multi-block'])
      expect(byDistinct.results[0].person).toBeNull()
      const longOnes = await json(stack.api('/api/projects/1/session_recordings/?duration_min=5'))
      expect(longOnes.results.map((r: any) => r.id)).toEqual(['multi-block'])
      const first = await json(stack.api('/api/projects/1/session_recordings/?limit=2'))
      expect(first).toMatchObject({ has_next: true, version: 4 })
      expect(first.results).toHaveLength(2)
      const later = await json(stack.api('/api/projects/1/session_recordings/?limit=2&offset=2'))
      expect(later.results.map((r: any) => r.id)).not.toContain(first.results[0].id)
      const sources = await json(stack.api('/api/projects/1/session_recordings/multi-block/snapshots'))
      expect(sources.sources.map((s: any) => s.blob_key)).toEqual(['0', '1', '2'])
      const all = await (await stack.api('/api/projects/1/session_recordings/multi-block/snapshots?source=blob_v2&start_blob_key=0&end_blob_key=2')).text()
      expect(all.trim().split('\n')).toHaveLength(15)
    })

    test('hostile bodies: a 10 KB session id, no snapshot data, no key, a gzip bomb', async () => {
      const longId = await post(stack, '/s/', JSON.stringify([snapshot('x'.repeat(10_000), rrweb(0))]))
      expect(longId.status).toBe(400)
      expect(((await longId.json()) as any).code).toBe('invalid_session_id')
      const noData = await post(stack, '/s/', JSON.stringify([{ event: '$snapshot', properties: { $session_id: 'nodata', token: PROJECT_KEY } }]))
      expect(((await noData.json()) as any).code).toBe('missing_snapshot_data')
      expect((await post(stack, '/s/', JSON.stringify([{ ...snapshot('nokey', rrweb(0)), properties: { $session_id: 'nokey', $snapshot_data: [] } }]))).status).toBe(401)
      // 25 MB of zeros: a ~25 KB body (and a 1 GB one, past its ratio) refused without inflating more than the cap
      const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024))
      const started = performance.now()
      const r = await post(stack, '/s/', bomb, { 'content-type': 'text/plain' })
      expect([400, 413]).toContain(r.status)
      expect(performance.now() - started).toBeLessThan(5000)
      const metrics = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
      expect(metrics).toContain('recording_requests_refused_total{code="invalid_session_id"} 1')
    })

    test('another project’s recording is 404; DELETE removes one; erasing a person removes theirs', async () => {
      expect((await stack.api('/api/projects/999/session_recordings/enc-json/')).status).toBeGreaterThanOrEqual(403)
      expect((await stack.api('/api/projects/1/session_recordings/no-such-session/snapshots')).status).toBe(404)
      expect((await stack.api('/api/projects/1/session_recordings/enc-json/', { method: 'DELETE' })).status).toBe(204)
      expect((await stack.api('/api/projects/1/session_recordings/enc-json/')).status).toBe(404)
      // a person with a recording: identified through capture, then erased
      expect((await post(stack, '/e/', JSON.stringify([{ event: '$identify', distinct_id: 'erase-me', properties: { token: PROJECT_KEY, $set: { email: 'e@x.io' } } }]))).status).toBe(200)
      expect((await post(stack, '/s/', JSON.stringify([snapshot('erased-session', rrweb(0), 'erase-me')]))).status).toBe(200)
      const rec = await waitFor(async () => {
        const r = (await (await stack.api('/api/projects/1/session_recordings/?distinct_id=erase-me')).json()) as any
        return r.results[0]?.person ? r.results[0] : null
      })
      expect(rec.person.distinct_ids).toContain('erase-me')
      const byPerson = await json(stack.api(`/api/projects/1/session_recordings/?person_uuid=${rec.person.id}`))
      expect(byPerson.results.map((r: any) => r.id)).toEqual(['erased-session'])
      expect((await stack.api(`/api/projects/1/persons/${rec.person.id}/`, { method: 'DELETE' })).status).toBeLessThan(300)
      expect((await stack.api('/api/projects/1/session_recordings/erased-session/')).status).toBe(404)
    })
  })
}
