// Capture through HTTP into the event store: every encoding, every error body, the seed's drops, and the
// events API reading it all back. Run against embedded stores and against real Postgres + ClickHouse.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { BASE, json, PERSONAL_KEY, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64')

async function waitForEvents(stack: Stack, query: string, count: number, ms = 15_000): Promise<any[]> {
  const deadline = Date.now() + ms
  let results: any[] = []
  while (Date.now() < deadline) {
    results = (await json(stack.api(`/api/projects/1/events/?limit=1000&${query}`))).results
    if (results.length >= count) return results
    await Bun.sleep(50)
  }
  return results
}

function post(stack: Stack, path: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  return stack.app.handle(new Request(`${BASE}${path}`, { method: 'POST', body, headers }))
}

for (const choice of [
  { postgres: 'embedded', clickhouse: 'embedded' },
  { postgres: 'real', clickhouse: 'real' },
] as { postgres: StoreChoice; clickhouse: StoreChoice }[]) {
  describe(`capture into ${choice.clickhouse === 'real' ? 'ClickHouse' : 'the embedded store'}`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack(choice, { FLUSH_INTERVAL_MS: 50 })
    })
    afterAll(() => stack?.close())

    test('every encoding and shape a client sends lands as the same event', async () => {
      const ev = (name: string, extra: Record<string, unknown> = {}) => ({ event: name, distinct_id: 'enc-user', properties: { via: name }, ...extra })
      const cases: [string, () => Promise<Response>][] = [
        ['json-single', () => post(stack, '/capture/', JSON.stringify({ api_key: PROJECT_KEY, ...ev('json-single') }), { 'content-type': 'application/json' })],
        ['json-array', () => post(stack, '/e/', JSON.stringify([{ ...ev('json-array'), properties: { token: PROJECT_KEY, via: 'json-array' } }]))],
        ['batch', () => post(stack, '/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch: [{ event: 'batch', properties: { distinct_id: 'enc-user', via: 'batch' } }] }))],
        ['gzip-header', () => post(stack, '/batch', gzipSync(JSON.stringify({ api_key: PROJECT_KEY, batch: [ev('gzip-header')] })), { 'content-encoding': 'gzip' })],
        ['gzip-js', () => post(stack, '/e/?compression=gzip-js&ver=1.200.0', gzipSync(JSON.stringify([{ ...ev('gzip-js'), token: PROJECT_KEY }])), { 'content-type': 'text/plain' })],
        ['gzip-magic', () => post(stack, '/i/v0/e/', gzipSync(JSON.stringify({ api_key: PROJECT_KEY, batch: [ev('gzip-magic')], sent_at: new Date().toISOString() })), { 'content-type': 'text/plain' })],
        ['lz64-query', () => post(stack, '/e/?compression=lz64', LZString.compressToBase64(JSON.stringify([{ ...ev('lz64-query'), token: PROJECT_KEY }])))],
        ['lz64-form', () => post(stack, '/e/', `data=${encodeURIComponent(LZString.compressToBase64(JSON.stringify([{ ...ev('lz64-form'), token: PROJECT_KEY }])))}&compression=lz64`, { 'content-type': 'application/x-www-form-urlencoded' })],
        ['base64-body', () => post(stack, '/capture/', b64(JSON.stringify({ api_key: PROJECT_KEY, ...ev('base64-body') })))],
        ['base64-form', () => post(stack, '/track/', `data=${encodeURIComponent(b64(JSON.stringify({ ...ev('base64-form'), api_key: PROJECT_KEY })))}`, { 'content-type': 'application/x-www-form-urlencoded' })],
        ['get-data', () => stack.app.handle(new Request(`${BASE}/e/?data=${encodeURIComponent(b64(JSON.stringify({ ...ev('get-data'), token: PROJECT_KEY })))}`))],
        ['no-slash', () => post(stack, '/capture', JSON.stringify({ api_key: PROJECT_KEY, ...ev('no-slash') }))],
      ]
      for (const [name, send] of cases) {
        const r = await send()
        expect({ name, status: r.status, body: await r.text() }).toEqual({ name, status: 200, body: '{"status":1}' })
      }
      const engage = await post(stack, '/engage/', JSON.stringify({ $token: PROJECT_KEY, $distinct_id: 'enc-user', $set: { plan: 'pro' } }))
      expect(engage.status).toBe(200)

      const stored = await waitForEvents(stack, 'distinct_id=enc-user', cases.length + 1)
      const names = stored.map((e) => e.event).sort()
      expect(names).toEqual([...cases.map(([n]) => n), '$identify'].sort())
      for (const e of stored.filter((x) => x.event !== '$identify')) expect(e.properties.via).toBe(e.event)
      expect(stored.find((e) => e.event === '$identify').properties.$set).toEqual({ plan: 'pro' })
    })

    test('the error bodies: missing key, unknown key, personal key without project, malformed data', async () => {
      const cases: [Response, number, Record<string, unknown>][] = [
        [await post(stack, '/capture/', JSON.stringify({ event: 'x', distinct_id: 'y' })), 401, { type: 'authentication_error', code: 'missing_api_key', attr: null }],
        [await post(stack, '/batch/', JSON.stringify({ batch: [{ event: 'x' }] })), 401, { code: 'missing_api_key' }],
        [await post(stack, '/capture/', JSON.stringify({ api_key: 'phc_unknown_key_123', event: 'x', distinct_id: 'y' })), 401, { type: 'authentication_error', code: 'invalid_api_key', attr: null }],
        [await post(stack, '/capture/', JSON.stringify({ api_key: PERSONAL_KEY, event: 'x', distinct_id: 'y' })), 400, { type: 'validation_error', code: 'invalid_project', attr: 'project_id' }],
        [await post(stack, '/capture/', JSON.stringify({ api_key: PERSONAL_KEY, project_id: 999, event: 'x', distinct_id: 'y' })), 400, { code: 'invalid_project', attr: 'project_id' }],
        [await post(stack, '/capture/', JSON.stringify({ api_key: 'phx_not_a_key', project_id: 1, event: 'x', distinct_id: 'y' })), 401, { code: 'invalid_personal_api_key' }],
        [await post(stack, '/capture/', '{"api_key": "phc_x", "event": '), 400, { type: 'validation_error', code: 'invalid_payload', attr: null }],
        [await post(stack, '/e/?compression=gzip-js', gzipSync('[{"event":"x"}]').subarray(0, 10)), 400, { code: 'invalid_payload' }],
        [await post(stack, '/e/', new Uint8Array([0xff, 0xfe, 0x00])), 400, { code: 'invalid_payload' }],
        [await post(stack, '/batch/', ''), 400, { code: 'no_data' }],
      ]
      for (const [r, status, body] of cases) {
        const got = await json(r)
        expect({ status: r.status, ...got }).toMatchObject({ status, ...body })
        expect(typeof got.detail).toBe('string')
        expect(r.headers.get('access-control-allow-origin')).toBe('*')
      }
      const malformed = await json(post(stack, '/capture/', 'not json at all'))
      expect(malformed.detail).toContain('Invalid JSON')
    })

    test('a personal key with project_id captures into that project', async () => {
      const r = await post(stack, '/capture/', JSON.stringify({ api_key: PERSONAL_KEY, project_id: 1, event: 'via-personal-key', distinct_id: 'pk-user' }))
      expect(r.status).toBe(200)
      expect((await waitForEvents(stack, 'distinct_id=pk-user', 1)).map((e) => e.event)).toEqual(['via-personal-key'])
    })

    test('events without a name or distinct id are accepted with 200, not stored, and counted by reason', async () => {
      const r = await post(
        stack,
        '/batch/',
        JSON.stringify({
          api_key: PROJECT_KEY,
          batch: [
            { properties: { distinct_id: 'drop-user' } },
            { event: '', properties: { distinct_id: 'drop-user' } },
            { event: 'dropped-no-id' },
            { event: 'dropped-empty-id', properties: { distinct_id: '' } },
            { event: 'kept', properties: { distinct_id: 'drop-user' } },
          ],
        }),
      )
      expect(r.status).toBe(200)
      expect(await r.json()).toEqual({ status: 1 })
      // only the /engage path names nameless events $identify, not a query that mentions it
      const notEngage = await post(stack, '/capture/?ref=/engage', JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'drop-user', $set: { a: 1 } }))
      expect(notEngage.status).toBe(200)
      expect((await waitForEvents(stack, 'distinct_id=drop-user', 1)).map((e) => e.event)).toEqual(['kept'])
      expect((await json(stack.api('/api/projects/1/events/?event=dropped-no-id'))).results).toEqual([])
      // counted by the flush worker and relayed to the registry a moment later
      let metrics = ''
      for (let i = 0; i < 50 && !metrics.includes('dropped_empty_distinct_id'); i++) {
        metrics = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
        await Bun.sleep(50)
      }
      expect(metrics).toContain('capture_events_total{outcome="dropped_no_event_name"} 3')
      expect(metrics).toContain('capture_events_total{outcome="dropped_no_distinct_id"} 1')
      expect(metrics).toContain('capture_events_total{outcome="dropped_empty_distinct_id"} 1')
    })

    test('a second event reusing a uuid is counted as a duplicate, and makes no person or definition', async () => {
      const uuid = crypto.randomUUID()
      const first = { event: 'dup-original', distinct_id: 'dup-owner', uuid, properties: { $set: { plan: 'free' } } }
      expect((await post(stack, '/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch: [first] }))).status).toBe(200)
      await waitForEvents(stack, 'distinct_id=dup-owner', 1)
      // the attacker's replay: same uuid, another person, another event name (in its own request and twice in one)
      const reuse = { event: 'dup-intruder', distinct_id: 'dup-intruder', uuid, properties: { $set: { plan: 'stolen' } } }
      expect((await post(stack, '/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch: [reuse] }))).status).toBe(200)
      const twice = crypto.randomUUID()
      const pair = [
        { event: 'dup-pair', distinct_id: 'dup-pair', uuid: twice },
        { event: 'dup-pair-second', distinct_id: 'dup-pair-second', uuid: twice },
      ]
      expect((await post(stack, '/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch: pair }))).status).toBe(200)
      await waitForEvents(stack, 'distinct_id=dup-pair', 1)
      let metrics = ''
      // both duplicates are counted by the store writer, perhaps in two batches: wait for the count, not the metric's first line
      for (let i = 0; i < 100 && !metrics.includes('capture_events_total{outcome="dropped_duplicate_uuid"} 2'); i++) {
        metrics = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
        await Bun.sleep(50)
      }
      expect(metrics).toContain('capture_events_total{outcome="dropped_duplicate_uuid"} 2')
      const stored = (await json(stack.api(`/api/projects/1/events/?distinct_id=dup-owner`))).results
      expect(stored.map((e: any) => [e.uuid, e.event])).toEqual([[uuid, 'dup-original']])
      expect((await json(stack.api('/api/projects/1/events/?distinct_id=dup-intruder'))).results).toEqual([])
      expect((await json(stack.api('/api/projects/1/events/?distinct_id=dup-pair-second'))).results).toEqual([])
      expect((await json(stack.api('/api/projects/1/persons/?distinct_id=dup-intruder'))).results).toEqual([])
      const owner = (await json(stack.api('/api/projects/1/persons/?distinct_id=dup-owner'))).results[0]
      expect(owner.properties.plan).toBe('free')
      const names = (await json(stack.api('/api/projects/1/event_definitions/?search=dup'))).results.map((d: any) => d.name)
      expect(names.sort()).toEqual(['dup-original', 'dup-pair'])
    })

    test('client clock skew is corrected with sent_at; long distinct ids are truncated to 200 characters', async () => {
      const now = Date.now()
      const skew = 3_600_000 // client clock an hour fast
      const r = await post(
        stack,
        '/batch/',
        JSON.stringify({
          api_key: PROJECT_KEY,
          sent_at: new Date(now + skew).toISOString(),
          batch: [
            { event: 'skewed', timestamp: new Date(now + skew - 120_000).toISOString(), properties: { distinct_id: 'skew-user' } },
            { event: 'long-id', properties: { distinct_id: 'L'.repeat(300) } },
          ],
        }),
      )
      expect(r.status).toBe(200)
      const [skewed] = await waitForEvents(stack, 'distinct_id=skew-user', 1)
      const at = Date.parse(skewed.timestamp)
      expect(Math.abs(at - (now - 120_000))).toBeLessThan(3000)
      const [long] = await waitForEvents(stack, `distinct_id=${'L'.repeat(200)}`, 1)
      expect(long.distinct_id).toHaveLength(200)
    })

    test('bodies over 20 MB are refused with 413; so is a gzip bomb, with bounded memory', async () => {
      const big = JSON.stringify({ api_key: PROJECT_KEY, event: 'big', distinct_id: 'x', properties: { blob: 'a'.repeat(21 * 1024 * 1024) } })
      const r = await post(stack, '/batch/', big)
      expect(r.status).toBe(413)
      expect(await r.json()).toEqual({ type: 'client_error', code: 'request_too_large', detail: 'Request too large.', attr: null })
      const bomb = gzipSync(Buffer.alloc(300 * 1024 * 1024, 32))
      const before = process.memoryUsage().rss
      const b = await post(stack, '/e/?compression=gzip-js', bomb)
      expect(b.status).toBe(413)
      expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024)
      const ok = await post(stack, '/capture/', JSON.stringify({ api_key: PROJECT_KEY, event: 'after-bomb', distinct_id: 'x' }))
      expect(ok.status).toBe(200)
    })

    test('CORS preflight mirrors the origin and headers; beacons get 204', async () => {
      const pre = await stack.app.handle(
        new Request(`${BASE}/e/`, {
          method: 'OPTIONS',
          headers: { origin: 'https://shop.example', 'access-control-request-headers': 'content-type,x-custom' },
        }),
      )
      expect(pre.status).toBe(200)
      expect(pre.headers.get('access-control-allow-origin')).toBe('https://shop.example')
      expect(pre.headers.get('access-control-allow-credentials')).toBe('true')
      expect(pre.headers.get('access-control-allow-headers')).toBe('content-type,x-custom')
      expect(pre.headers.get('access-control-allow-methods')).toContain('POST')
      const beacon = await post(stack, '/e/?beacon=1', JSON.stringify([{ event: 'beacon', distinct_id: 'b', token: PROJECT_KEY }]), { origin: 'https://shop.example' })
      expect(beacon.status).toBe(204)
      expect(beacon.headers.get('access-control-allow-origin')).toBe('https://shop.example')
    })

    test('?ip=0 means the visitor’s address is not recorded', async () => {
    const r = await post(stack, '/e/?ip=0&ver=1.100.0&_=1700000000000', JSON.stringify([{ event: 'no-ip', distinct_id: 'ip-user', token: PROJECT_KEY }]), { 'x-forwarded-for': '198.51.100.7' })
    expect(r.status).toBe(200)
    const [stored] = await waitForEvents(stack, 'distinct_id=ip-user', 1)
    expect(stored.properties.$ip).toBeUndefined()
  })

  test('session recordings (/s/) are acknowledged and counted (stored: test/integration/replay.test.ts)', async () => {
      const body = [{ event: '$snapshot', properties: { $session_id: 's-1', $window_id: 'w-1', $snapshot_data: [{ type: 4, data: { href: 'https://x' }, timestamp: 1 }], token: PROJECT_KEY } }]
      const r = await post(stack, '/s/?compression=gzip-js', gzipSync(JSON.stringify(body)))
      expect(r.status).toBe(200)
      expect(await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()).toContain('recording_events_received_total 1')
    })

    test('the events API pages through 250 events sharing one timestamp without skipping or repeating', async () => {
      const ts = '2024-05-05T05:05:05.000Z'
      const batch = Array.from({ length: 250 }, (_, i) => ({ event: 'paged', timestamp: ts, properties: { distinct_id: 'pager', i } }))
      expect((await post(stack, '/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch }))).status).toBe(200)
      await waitForEvents(stack, 'distinct_id=pager', 250)
      const seen: number[] = []
      let path: string | null = '/api/projects/1/events/?distinct_id=pager&limit=40'
      let pages = 0
      while (path) {
        const page: any = await json(stack.api(path))
        for (const e of page.results) {
          expect(e.timestamp).toBe('2024-05-05T05:05:05Z')
          seen.push(e.properties.i)
        }
        path = page.next ? new URL(page.next).pathname + new URL(page.next).search : null
        pages++
      }
      expect(pages).toBe(7)
      expect(seen).toHaveLength(250)
      expect(new Set(seen).size).toBe(250)
    })

    test('the events API filters by name and time and checks its parameters', async () => {
      const r = await post(stack, '/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch: [
        { event: 'window', timestamp: '2023-01-01T00:00:00Z', properties: { distinct_id: 'w' } },
        { event: 'window', timestamp: '2023-01-02T00:00:00Z', properties: { distinct_id: 'w' } },
        { event: 'window', timestamp: '2023-01-03T00:00:00Z', properties: { distinct_id: 'w' } },
      ] }))
      expect(r.status).toBe(200)
      await waitForEvents(stack, 'event=window', 3)
      const mid = await json(stack.api('/api/projects/1/events/?event=window&after=2023-01-02T00:00:00Z&before=2023-01-03T00:00:00Z'))
      expect(mid.results.map((e: any) => e.timestamp)).toEqual(['2023-01-02T00:00:00Z'])
      expect(mid.next).toBeNull()
      expect((await json(stack.api('/api/projects/1/events/?after=yesterday'))).attr).toBe('after')
      expect((await json(stack.api('/api/projects/1/events/?limit=0'))).attr).toBe('limit')
      expect((await json(stack.api('/api/projects/1/events/?cursor=zzz'))).attr).toBe('cursor')
      expect((await stack.api('/api/projects/2/events/')).status).toBe(404)
    })
  })
}
