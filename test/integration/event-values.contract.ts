// Property value suggestions (GET /api/projects/:id/events/values/): the most frequent values of the last 7 days,
// through the query layer, on every store. The attacks: a 100 kB key, a key with a quote or backslash, a value
// that tries to leave its literal, 10 kB values, more distinct values than the answer may hold.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { BASE, json, learned, PROJECT_KEY, type Stack } from '../helpers/stack'

const BROWSERS = ['Chrome', 'Chrome', 'Chrome', 'Firefox', 'Firefox', 'Safari']
const MANY = 120

export function eventValuesContract(name: string, start: () => Promise<Stack>): void {
  describe(`property value suggestions (${name})`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await start()
      const now = Date.now()
      const batch = [
        ...BROWSERS.map((browser, i) => ({ event: 'pageview', timestamp: new Date(now - i * 60_000).toISOString(), properties: { distinct_id: `u${i}`, $browser: browser } })),
        { event: 'signup', timestamp: new Date(now).toISOString(), properties: { distinct_id: 'u9', $browser: 'Edge' } },
        // older than the window: not suggested
        { event: 'pageview', timestamp: new Date(now - 30 * 86_400_000).toISOString(), properties: { distinct_id: 'old', $browser: 'Netscape' } },
        ...Array.from({ length: MANY }, (_, i) => ({ event: 'many', timestamp: new Date(now - i * 1000).toISOString(), properties: { distinct_id: `m${i}`, code: `code-${String(i).padStart(3, '0')}`, long: 'x'.repeat(10_000) } })),
      ]
      expect((await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))).status).toBe(200)
      await learned(stack, 60_000)
      for (let i = 0; i < 300; i++) {
        const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' } } })
        if ((await json(r)).results[0][0] === batch.length) break
        await Bun.sleep(100)
      }
    }, 240_000)
    afterAll(async () => stack?.close())

    const values = async (query: Record<string, string>) => {
      const started = performance.now()
      const r = await stack.api(`/api/projects/1/events/values/?${new URLSearchParams(query)}`)
      const text = await r.text()
      console.log(`values ${JSON.stringify(query).slice(0, 80)}: ${r.status}, ${text.length} bytes in ${(performance.now() - started).toFixed(0)} ms`)
      return { status: r.status, body: JSON.parse(text) }
    }

    test('the most frequent values of the last 7 days first; narrowed by a substring and an event name', async () => {
      const all = await values({ key: '$browser' })
      expect(all.status).toBe(200)
      expect(all.body).toEqual([{ name: 'Chrome' }, { name: 'Firefox' }, { name: 'Edge' }, { name: 'Safari' }])
      expect((await values({ key: '$browser', value: 'fI' })).body).toEqual([{ name: 'Firefox' }])
      expect((await values({ key: '$browser', event_name: 'signup' })).body).toEqual([{ name: 'Edge' }])
      // `%` and `_` match themselves, not any text
      expect((await values({ key: '$browser', value: '%' })).body).toEqual([])
      expect((await values({ key: 'nobody-sends-this' })).body).toEqual([])
    }, 60_000)

    test('at most 50 values, each cut to 200 characters', async () => {
      const many = await values({ key: 'code', event_name: 'many' })
      expect(many.status).toBe(200)
      expect(many.body).toHaveLength(50)
      const long = await values({ key: 'long' })
      expect(long.status).toBe(200)
      expect(long.body).toEqual([{ name: 'x'.repeat(200) }])
    }, 60_000)

    test('hostile input: refused 400 naming its field, or kept inside its literal', async () => {
      for (const [query, attr] of [
        [{ key: 'k'.repeat(100_000) }, 'key'],
        [{ key: 'a"b' }, 'key'],
        [{ key: 'a\\b' }, 'key'],
        [{ key: 'a\nb' }, 'key'],
        [{}, 'key'],
        [{ key: '$browser', value: 'v'.repeat(201) }, 'value'],
        [{ key: '$browser', event_name: 'e'.repeat(401) }, 'event_name'],
      ] as [Record<string, string>, string][]) {
        const r = await values(query)
        expect(r.status).toBe(400)
        expect(r.body.type).toBe('validation_error')
        expect(r.body.attr).toBe(attr)
      }
      const quoted = await values({ key: "$browser' OR 1=1 --", value: "' OR '1'='1" })
      expect(quoted.status).toBe(200)
      expect(quoted.body).toEqual([])
      const metrics = await (await stack.app.handle(new Request(`${BASE}/metrics`))).text()
      expect(Number(/event_property_values_requests_total\{outcome="refused"\} (\d+)/.exec(metrics)?.[1])).toBeGreaterThanOrEqual(7)
    }, 60_000)

    test('no key: 401 (the query:read scope: key-scopes.test.ts)', async () => {
      const r = await stack.app.handle(new Request(`${BASE}/api/projects/1/events/values/?key=$browser`))
      expect(r.status).toBe(401)
    })
  })
}
