// Session replay attacked as a hostile key holder would: /s/ bodies the recordings consumer must not choke on (a
// timestamp of 1e300, sessions timed in 120 different months), on the embedded stores and on ClickHouse + Postgres,
// and on chDB (ClickHouse 26.7, which refuses an insert into more than 100 partitions; 18.16 does not).
// What must hold: every later recording is still stored, and every answer keeps its shape.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { ClickHouseRecordingStore } from '../../src/replay/clickhouse-store'
import { blockOf } from '../../src/replay/metadata'
import { MAX_SOURCES } from '../../src/replay/service'
import { SqliteRecordingStore } from '../../src/replay/sqlite-store'
import { join } from 'node:path'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { BASE, json, PROJECT_KEY, startStack, type Stack, type StoreChoice } from '../helpers/stack'

function post(stack: Stack, path: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  return stack.app.handle(new Request(`${BASE}${path}`, { method: 'POST', body, headers }))
}

function snapshot(sessionId: string, events: unknown[], windowId = 'w-1') {
  return { event: '$snapshot', properties: { $snapshot_data: events, $session_id: sessionId, $window_id: windowId, distinct_id: 'attacker', token: PROJECT_KEY } }
}

const move = (timestamp: unknown) => ({ type: 3, data: { source: 1, positions: [] }, timestamp })

async function waitFor<T>(check: () => Promise<T | null>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== null) return value
    if (Date.now() > deadline) throw new Error('timed out')
    await Bun.sleep(50)
  }
}

const stored = (stack: Stack, id: string) =>
  waitFor(async () => {
    const r = await stack.api(`/api/projects/1/session_recordings/${id}/`)
    return r.status === 200 ? ((await r.json()) as any) : null
  })

for (const choice of [
  { postgres: 'embedded', clickhouse: 'embedded' },
  { postgres: 'real', clickhouse: 'real' },
] as { postgres: StoreChoice; clickhouse: StoreChoice }[]) {
  describe(`hostile recordings on ${choice.clickhouse === 'real' ? 'ClickHouse + Postgres' : 'the embedded stores'}`, () => {
    let stack: Stack
    beforeAll(async () => {
      stack = await startStack(choice, { FLUSH_INTERVAL_MS: 50 })
    })
    afterAll(() => stack?.close())

    test('timestamps of 1e300, past Int64, fractional, and 120 months in one request hold no later recording back', async () => {
      const now = Date.now()
      const hostile: [string, unknown][] = [['ts-huge', 1e300], ['ts-negative', -1e300], ['ts-past-int64', 9.3e18], ['ts-fraction', now + 0.5]]
      for (const [id, ts] of hostile) {
        // a real event beside the hostile one: the session is timed by it
        const r = await post(stack, '/s/', JSON.stringify([snapshot(id, [move(ts), move(now - 1000), { type: 4, data: { href: 'h'.repeat(1_000_000) }, timestamp: ts }])]))
        expect(r.status).toBe(200)
      }
      const months = Array.from({ length: 120 }, (_, i) => snapshot(`month-${i}`, [move(now - i * 31 * 86_400_000)]))
      expect((await post(stack, '/s/', JSON.stringify(months))).status).toBe(200)
      expect((await post(stack, '/s/', JSON.stringify([snapshot('after-the-attack', [move(now)])]))).status).toBe(200)
      const after = await stored(stack, 'after-the-attack')
      expect(Date.parse(after.start_time)).toBe(now)
      for (const [id] of hostile) {
        const rec = await stored(stack, id)
        expect(Date.parse(rec.start_time)).toBe(now - 1000)
        expect(rec.end_time).not.toBeNull()
        expect(rec.start_url).toHaveLength(2048)
      }
      // a recording timed in 2099 is timed at most a day ahead (retention would never have removed it)
      expect((await post(stack, '/s/', JSON.stringify([snapshot('from-2099', [move(Date.UTC(2099, 0, 1))])]))).status).toBe(200)
      const future = await stored(stack, 'from-2099')
      expect(Date.parse(future.end_time)).toBeLessThanOrEqual(Date.now() + 86_400_000)
      expect(Date.parse(future.end_time)).toBeGreaterThan(Date.now() + 86_400_000 - 120_000)
      const list = await json(stack.api('/api/projects/1/session_recordings/?limit=1000'))
      expect(list.results.length).toBeGreaterThanOrEqual(hostile.length + 1)
      for (const item of list.results) expect(typeof item.start_time).toBe('string')
      const sources = await json(stack.api('/api/projects/1/session_recordings/ts-huge/snapshots'))
      for (const s of sources.sources) expect(typeof s.start_timestamp).toBe('string')
    }, 60_000)

    test('a distinct id holding a NUL and a lone surrogate breaks neither the recording nor the list holding it', async () => {
      const body = [{ ...snapshot('nul-distinct', [move(Date.now())]), distinct_id: 'a\u0000b\ud800c' }]
      expect((await post(stack, '/s/', JSON.stringify(body))).status).toBe(200)
      const rec = await stored(stack, 'nul-distinct')
      expect(rec.distinct_id).toBe('a\ufffdb\ufffdc')
      const list = await stack.api('/api/projects/1/session_recordings/?limit=1000')
      expect(list.status).toBe(200)
      expect(((await list.json()) as any).results.map((r: any) => r.id)).toContain('nul-distinct')
    }, 60_000)

    test('a first URL cut at 2,048 characters in the middle of an emoji, and lone surrogates, hold no later recording back', async () => {
      const now = Date.now()
      const events = [{ type: 4, data: { href: `${'a'.repeat(2047)}😀` }, timestamp: now }, { type: 4, data: { href: 'x\ud800' }, timestamp: now + 1, '\udc00': '\ud800' }]
      expect((await post(stack, '/s/', JSON.stringify([{ ...snapshot('emoji-url', events), properties: { ...snapshot('emoji-url', events).properties, $lib: 'l\ud800' } }]))).status).toBe(200)
      expect((await post(stack, '/s/', JSON.stringify([snapshot('after-the-emoji', [move(now)])]))).status).toBe(200)
      await stored(stack, 'after-the-emoji')
      const rec = await stored(stack, 'emoji-url')
      expect(rec.start_url.startsWith('a'.repeat(2047))).toBe(true)
      const lines = await (await stack.api('/api/projects/1/session_recordings/emoji-url/snapshots?source=blob_v2&start_blob_key=0')).text()
      expect(lines.trim().split('\n').map((l) => JSON.parse(l)[1])).toEqual(events)
    }, 60_000)

    test('a personal key in the query is refused, even beside a project key in the body (the query is logged as it came)', async () => {
      const body = JSON.stringify([snapshot('with-personal-key', [move(Date.now())])])
      for (const query of ['token=phx_test_personal_key_0001', 'api_key=phx_test_personal_key_0001', 'token=phc_x&token=phx_test_personal_key_0001']) {
        const r = await post(stack, `/s/?${query}`, body)
        expect({ query, status: r.status, code: ((await r.json()) as any).code }).toEqual({ query, status: 400, code: 'invalid_api_key' })
      }
      expect((await stack.api('/api/projects/1/session_recordings/with-personal-key/')).status).toBe(404)
    })

    test('a person of 3,000 long distinct ids: their recordings are listed by person, and erased with them', async () => {
      const anon = (i: number) => `anon-${i}-${'x'.repeat(150)}`
      const identifies = Array.from({ length: 3000 }, (_, i) => ({ event: '$identify', distinct_id: 'many-ids', properties: { $anon_distinct_id: anon(i) } }))
      const r = await post(stack, '/batch/', JSON.stringify({ api_key: PROJECT_KEY, batch: identifies }), { 'content-type': 'application/json' })
      expect(r.status).toBe(200)
      expect((await post(stack, '/s/', JSON.stringify([{ ...snapshot('many-ids-session', [move(Date.now())]), distinct_id: anon(2999) }]))).status).toBe(200)
      const person = await waitFor(async () => {
        const page = (await (await stack.api('/api/projects/1/session_recordings/?distinct_id=' + anon(2999))).json()) as any
        return page.results[0]?.person?.distinct_ids?.length === 3001 ? page.results[0].person : null
      }, 60_000)
      const byPerson = await stack.api(`/api/projects/1/session_recordings/?person_uuid=${person.id}`)
      expect(byPerson.status).toBe(200)
      expect(((await byPerson.json()) as any).results.map((x: any) => x.id)).toEqual(['many-ids-session'])
      expect((await stack.api(`/api/projects/1/persons/${person.id}/`, { method: 'DELETE' })).status).toBeLessThan(300)
      expect((await stack.api('/api/projects/1/session_recordings/many-ids-session/')).status).toBe(404)
    }, 120_000)

    test.if(choice.clickhouse === 'embedded')(`a session of more than ${MAX_SOURCES} blocks lists its first ${MAX_SOURCES} sources`, async () => {
      // a million tiny requests to one session made a 129 MB sources answer (23 s of an analytics thread); the blocks
      // are written straight into the store here, as the recordings writer would, to spare the test a million requests
      expect((await post(stack, '/s/', JSON.stringify([snapshot('many-blocks', [move(Date.now())])]))).status).toBe(200)
      await stored(stack, 'many-blocks')
      const store = new SqliteRecordingStore(join(stack.dataDir, 'recordings.sqlite'))
      await store.init()
      for (let i = 0; i < MAX_SOURCES + 1; i += 10_000) {
        const writes = Array.from({ length: Math.min(10_000, MAX_SOURCES + 1 - i) }, (_, j) => ({
          teamId: 1,
          id: `attack-${i + j}`,
          block: blockOf({ sessionId: 'many-blocks', windowId: 'w', distinctId: 'attacker', source: 'web', library: null, events: [move(Date.now())] }),
        }))
        await store.write(writes)
      }
      await store.close()
      const sources = await json(stack.api('/api/projects/1/session_recordings/many-blocks/snapshots'))
      expect(sources.sources).toHaveLength(MAX_SOURCES)
      expect(sources.sources.at(-1).blob_key).toBe(String(MAX_SOURCES - 1))
      const last = await stack.api(`/api/projects/1/session_recordings/many-blocks/snapshots?source=blob_v2&start_blob_key=${MAX_SOURCES - 1}`)
      expect((await last.text()).trim().split('\n')).toHaveLength(1)
    }, 120_000)
  })
}

describeWithChdb('hostile recordings on chDB (ClickHouse 26.7)', () => {
  test('one write of sessions timed in 120 different months is stored (inserts of at most 100 partitions)', async () => {
    const url = chdbUrl(`replay_attack_${crypto.randomUUID().slice(0, 8)}`)
    const events = new ClickHouseEventStore(url, { client: chdbClient() }) // its migrations make the table
    await events.init()
    const store = new ClickHouseRecordingStore(url, { client: chdbClient() })
    await store.init()
    const now = Date.now()
    const writes = Array.from({ length: 120 }, (_, i) => ({
      teamId: 1,
      id: `1-${i}`,
      block: blockOf({ sessionId: `month-${i}`, windowId: 'w', distinctId: 'd', source: 'web', library: 'web', events: [move(now - i * 31 * 86_400_000)] }),
    }))
    await store.write(writes)
    const rows = await store.list({ teamId: 1, limit: 1000, offset: 0 })
    expect(rows).toHaveLength(120)
    await store.close()
  }, 60_000)
})
