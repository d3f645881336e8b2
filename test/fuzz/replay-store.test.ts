// Hostile rrweb events all the way to the recording stores: random timestamps (huge, negative, fractional, strings),
// URLs, distinct ids and libraries with NULs, lone surrogates and emoji cut anywhere, deep and odd event shapes, on
// the embedded stores and on ClickHouse 18.16 + Postgres. What must hold: /s/ never answers 5xx, the recordings
// consumer never stalls (a canary sent last is stored), and every accepted session reads back with its shape.
// Reduced in `npm test`; FUZZ_FULL=1 runs more.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { BASE, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'
import { fuzzParams } from './settings'

const RUNS = fuzzParams(40, 400)

const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u0000', '\ud800', '\udc00x', `${'a'.repeat(2047)}😀`, '😀'.repeat(1200), '\u202e', ''),
)
const timestamp = fc.oneof(
  fc.integer({ min: Date.now() - 86_400_000, max: Date.now() }),
  fc.double(),
  fc.constantFrom(1e300, -1e300, 9.3e18, -1, 0, Date.UTC(2099, 0, 1), Date.UTC(2106, 1, 7), Date.now() + 0.5, Number.MAX_SAFE_INTEGER),
  fc.string({ maxLength: 10 }),
  fc.constant(null),
)
const rrwebEvent = fc.record(
  {
    type: fc.oneof(fc.integer({ min: 0, max: 7 }), fc.string({ maxLength: 3 })),
    timestamp,
    data: fc.oneof(
      fc.record({ href: nasty, width: fc.integer() }),
      fc.record({ source: fc.oneof(fc.integer({ min: -1, max: 13 }), nasty), type: fc.integer({ min: 0, max: 10 }), text: nasty }),
      fc.record({ plugin: fc.constant('rrweb/console@1'), payload: fc.record({ level: fc.oneof(nasty, fc.constantFrom('log', 'warn', 'error')), payload: fc.array(nasty) }) }),
      fc.jsonValue({ maxDepth: 4 }),
    ),
  },
  { requiredKeys: [] },
)

function post(stack: Stack, body: string) {
  return stack.app.handle(new Request(`${BASE}/s/`, { method: 'POST', body, headers: { 'content-type': 'application/json' } }))
}

async function waitFor<T>(check: () => Promise<T | null>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== null) return value
    if (Date.now() > deadline) throw new Error(`timed out; the recordings consumer: ${JSON.stringify(lastStats)}`)
    await Bun.sleep(100)
  }
}
let lastStats: unknown

for (const choice of [
  { postgres: 'embedded', clickhouse: 'embedded' },
  { postgres: 'real', clickhouse: 'real' },
] as { postgres: StoreChoice; clickhouse: StoreChoice }[]) {
  describe(`hostile rrweb events reach the ${choice.clickhouse === 'real' ? 'ClickHouse' : 'embedded'} recording store`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack(choice, { FLUSH_INTERVAL_MS: 50 })
    })
    afterAll(() => stack?.close())

    test('never a 5xx, never a stalled consumer, every accepted session readable', async () => {
      const accepted: string[] = []
      let n = 0
      await fc.assert(
        fc.asyncProperty(fc.array(rrwebEvent, { minLength: 1, maxLength: 8 }), nasty, nasty, async (events, distinctId, lib) => {
          const id = `fuzz-${n++}`
          const r = await post(stack, JSON.stringify([{ event: '$snapshot', distinct_id: distinctId, properties: { $session_id: id, $window_id: 'w', $snapshot_data: events, token: PROJECT_KEY, $lib: lib } }]))
          expect(r.status).toBeLessThan(500)
          if (r.status === 200) accepted.push(id)
        }),
        RUNS,
      )
      expect((await post(stack, JSON.stringify([{ event: '$snapshot', properties: { $session_id: 'canary', $snapshot_data: [{ type: 3, data: { source: 1 }, timestamp: Date.now() }], token: PROJECT_KEY } }]))).status).toBe(200)
      await waitFor(async () => {
        lastStats = stack.services.captureLog.stats().consumers.recordings
        return (await stack.api('/api/projects/1/session_recordings/canary/')).status === 200 ? true : null
      })
      const list = await stack.api('/api/projects/1/session_recordings/?limit=1000')
      expect(list.status).toBe(200)
      const items = ((await list.json()) as any).results as any[]
      for (const item of items) expect([item.id, typeof item.start_time, typeof item.end_time]).toEqual([item.id, 'string', 'string'])
      // every accepted session with a block reads back (retention may have taken those timed before its cutoff)
      const listed = new Set(items.map((i) => i.id))
      for (const id of accepted.filter((a) => listed.has(a))) {
        const sources = await stack.api(`/api/projects/1/session_recordings/${id}/snapshots`)
        expect([id, sources.status]).toEqual([id, 200])
        const blocks = await stack.api(`/api/projects/1/session_recordings/${id}/snapshots?source=blob_v2&start_blob_key=0&end_blob_key=99`)
        expect([id, blocks.status]).toEqual([id, 200])
        for (const line of (await blocks.text()).trim().split('\n')) expect(JSON.parse(line)[0]).toBe('w')
      }
      expect(listed.size).toBeGreaterThan(1)
    }, 240_000)
  })
}
