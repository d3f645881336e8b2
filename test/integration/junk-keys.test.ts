// Memory pinned by junk keys: unique 10 MB api_keys, gzipped to ~10 KB each on the wire, all answered 401,
// used to be kept whole by the token cache (RSS 247 MB → 1.18 GB, and it stayed). Keys longer than any real
// one are now refused before they are hashed, cached or looked up.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

describe('junk keys', () => {
  let svc: ServiceProcess
  beforeAll(async () => {
    svc = await spawnService(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' }))
  })
  afterAll(async () => {
    await svc?.stop()
  })

  const rss = async () => {
    const text = await (await fetch(`${svc.url}/metrics`)).text()
    return Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)![1])
  }

  test('40 unique 10 MB api_keys, gzipped: all 401, and memory does not keep them', async () => {
    // warm up the paths once, so their own allocations are not counted as growth
    await fetch(`${svc.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, event: 'warm', distinct_id: 'd' }) })
    const before = await rss()
    const filler = 'k'.repeat(10 * 1024 * 1024)
    for (let i = 0; i < 40; i++) {
      const body = gzipSync(JSON.stringify({ api_key: `phc_${crypto.randomUUID()}${filler}`, event: 'e', distinct_id: 'd' }))
      expect(body.length).toBeLessThan(64 * 1024)
      const r = await fetch(`${svc.url}/capture/`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body })
      expect(r.status).toBe(401)
      expect(((await r.json()) as { code: string }).code).toBe('invalid_api_key')
      const d = await fetch(`${svc.url}/decide/?v=3`, { method: 'POST', headers: { 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify({ token: `phc_${crypto.randomUUID()}${filler}`, distinct_id: 'd' })) })
      expect(d.status).toBe(401)
    }
    Bun.gc?.(true)
    await Bun.sleep(500)
    const grown = (await rss()) - before
    // 80 keys of 10 MB kept whole would be 800 MB or more (UTF-16); decoding buffers come and go
    expect(grown).toBeLessThan(250 * 1024 * 1024)
  })

  test('a personal key longer than any real one is refused without a lookup', async () => {
    const r = await fetch(`${svc.url}/api/projects/`, { headers: { authorization: `Bearer phx_${'x'.repeat(4000)}` } })
    expect(r.status).toBe(401)
    expect(((await r.json()) as { code: string }).code).toBe('invalid_personal_api_key')
    expect((await fetch(`${svc.url}/api/projects/`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })).status).toBe(200)
  })

  test('a private route checks the key before it reads a body: a bad key with a huge chunked body is 401 at once', async () => {
    let pulled = 0
    const chunk = new Uint8Array(64 * 1024).fill(0x61)
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (pulled >= 1100) return controller.close() // ~70 MB if it were all read
        pulled++
        controller.enqueue(chunk)
        await Bun.sleep(1)
      },
    })
    const r = await fetch(`${svc.url}/api/projects/@current/feature_flags/`, {
      method: 'POST',
      headers: { authorization: 'Bearer phx_not_a_real_key', 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit)
    expect(r.status).toBe(401)
    expect(((await r.json()) as { code: string }).code).toBe('invalid_personal_api_key')
    expect(pulled).toBeLessThan(1100)
  })
})
