// What an anonymous request may cost on the private API: its key is checked before its body is read.
// (Junk keys themselves are covered by key-attacks.test.ts.)
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv } from '../helpers/stack'

describe('anonymous bodies on the private API', () => {
  let svc: ServiceProcess
  beforeAll(async () => {
    svc = await spawnService(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' }))
  })
  afterAll(async () => {
    await svc?.stop()
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
