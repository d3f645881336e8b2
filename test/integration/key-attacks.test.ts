// Attacks on key handling (issue: no request can degrade the others): huge keys must cost no cache memory, and
// unknown personal keys must cost a bounded number of Postgres lookups.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { BASE, json, PERSONAL_KEY, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'

function rssMb(): number {
  Bun.gc(true)
  return process.memoryUsage().rss / 1024 / 1024
}

describe('key attacks', () => {
  let stack: Stack
  beforeAll(async () => {
    stack = await startStack({ postgres: 'real', clickhouse: 'embedded' }, { UNKNOWN_KEY_LOOKUPS_PER_MINUTE: 30 })
  })
  afterAll(() => stack?.close())

  test('120 unique ~2 MB api_keys sent gzipped: all 401, and RSS stays bounded (nothing keeps them)', async () => {
    const before = rssMb()
    // a key gzip squeezes about 30 times (within the 100x expansion a compressed body may have)
    const letters = 'abcdefghijklmnopqrstuvwxyz'
    let seed = 7
    const blocks = Array.from({ length: (2 * 1024 * 1024) / 40 }, () => 'k'.repeat(39) + letters[(seed = (seed * 1103515245 + 12345) >>> 0) % 26])
    for (let i = 0; i < 120; i++) {
      // a unique 2 MB key: a short unique head, then the blocks in an order of its own
      const key = `phc_${i}_${crypto.randomUUID()}${blocks.slice(i).join('')}${blocks.slice(0, i).join('')}`
      const body = gzipSync(JSON.stringify({ api_key: key, event: 'e', distinct_id: 'd' }))
      expect(body.length).toBeLessThan(200_000)
      const r = await stack.app.handle(
        new Request(`${BASE}/capture/`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body }),
      )
      expect(r.status).toBe(401)
      expect((await json(r)).code).toBe('invalid_api_key')
    }
    const grown = rssMb() - before
    console.log(`RSS grew ${grown.toFixed(0)} MB over 120 unique 2 MB keys`)
    // keeping them would be 120 × 2 MB (and more as UTF-16) = 480 MB+; transient decoding leaves far less behind
    expect(grown).toBeLessThan(200)
    const memo = (stack.services.tokens as unknown as { slots: Map<string, unknown> }).slots
    for (const token of memo.keys()) expect(token.length).toBeLessThanOrEqual(100)
  })

  test('a key longer than 100 characters is refused before any lookup, on every route', async () => {
    const lookups = stack.services.auth.lookups
    const long = `phx_${'a'.repeat(200)}`
    const r = await stack.api('/api/projects/', { headers: { authorization: `Bearer ${long}` } })
    expect(r.status).toBe(401)
    expect((await json(r)).code).toBe('invalid_personal_api_key')
    const d = await stack.app.handle(
      new Request(`${BASE}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ token: long, project_id: 1, distinct_id: 'd' }) }),
    )
    expect(d.status).toBe(401)
    expect(stack.services.auth.lookups).toBe(lookups)
  })

  test('unknown personal keys: a repeated one is looked up once; a flood of fresh ones is throttled per address', async () => {
    const auth = stack.services.auth
    expect((await stack.api('/api/projects/')).status).toBe(200)
    const repeated = `phx_unknown_${crypto.randomUUID().replace(/-/g, '')}`
    const start = auth.lookups
    for (let i = 0; i < 50; i++) {
      const r = await stack.api('/api/projects/', { headers: { authorization: `Bearer ${repeated}` } })
      expect(r.status).toBe(401)
    }
    expect(auth.lookups - start).toBe(1)

    const floodStart = auth.lookups
    const statuses = new Map<number, number>()
    for (let i = 0; i < 500; i++) {
      const key = `phx_flood_${i}_${crypto.randomUUID().replace(/-/g, '')}`
      const r = await stack.api('/api/projects/', { headers: { authorization: `Bearer ${key}` } })
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
    }
    // UNKNOWN_KEY_LOOKUPS_PER_MINUTE = 30: the burst, plus the trickle the bucket refills during the test
    expect(auth.lookups - floodStart).toBeLessThanOrEqual(40)
    expect(statuses.get(429)).toBeGreaterThan(400)
    // a key this address used successfully before keeps working while the address is throttled
    expect((await stack.api('/api/projects/')).status).toBe(200)

    // public endpoints (personal key + project_id): the same bound
    const publicStart = auth.lookups
    for (let i = 0; i < 300; i++) {
      await stack.app.handle(
        new Request(`${BASE}/decide/?v=3`, {
          method: 'POST',
          body: JSON.stringify({ token: `phx_public_${i}_${crypto.randomUUID()}`, project_id: 1, distinct_id: 'd' }),
        }),
      )
    }
    expect(auth.lookups - publicStart).toBeLessThanOrEqual(40)
    expect(PERSONAL_KEY).toMatch(/^phx_/)
  })

  test('a project migrated from a hashed token shows api_token null until a request presents the token', async () => {
    const sql = stack.services.db.sql
    await sql`update projects set api_token = null where id = 1`
    await stack.services.tokens.invalidate()
    expect((await json(stack.api('/api/projects/1/'))).api_token).toBeNull()
    const r = await stack.app.handle(
      new Request(`${BASE}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'e', distinct_id: 'd' }) }),
    )
    expect(r.status).toBe(200)
    const until = Date.now() + 5_000
    let shown: string | null = null
    while (Date.now() < until && shown === null) {
      shown = (await json(stack.api('/api/projects/1/'))).api_token
      if (shown === null) await Bun.sleep(20)
    }
    expect(shown).toBe(PROJECT_KEY)
  })
})
