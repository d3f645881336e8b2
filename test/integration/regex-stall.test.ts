// A flag with a nested-quantifier pattern and crafted /decide calls must not stall the service: with a
// backtracking engine, eight calls whose `email` is 40 × "a" + "!" kept /_health from answering for 13 s.
// Regex conditions now run on a linear-time engine, so the other endpoints keep answering meanwhile.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

// Generous for a loaded 2-core machine, yet far below the seconds a backtracking match takes.
const RESPONSIVE_MS = 200

describe('a catastrophic regex in a flag condition', () => {
  let svc: ServiceProcess
  beforeAll(async () => {
    svc = await spawnService(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' }))
    const created = await fetch(`${svc.url}/api/projects/@current/feature_flags/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        key: 'nested-quantifier',
        filters: {
          groups: [{ properties: [{ key: 'email', type: 'person', operator: 'regex', value: '^(a+)+$' }], rollout_percentage: 100 }],
        },
      }),
    })
    expect(created.status).toBe(201)
  })
  afterAll(async () => {
    await svc?.stop()
  })

  const decide = async (email: string): Promise<unknown> => {
    const r = await fetch(`${svc.url}/decide/?v=3`, {
      method: 'POST',
      body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: `user-${email.length}`, person_properties: { email } }),
    })
    expect(r.status).toBe(200)
    return ((await r.json()) as { featureFlags: Record<string, unknown> }).featureFlags['nested-quantifier']
  }

  const timed = async (request: () => Promise<Response>): Promise<number> => {
    const start = performance.now()
    const r = await request()
    expect(r.status).toBe(200)
    await r.arrayBuffer()
    return performance.now() - start
  }

  test('eight crafted /decide calls at once: /_health and /capture/ keep answering, every answer is right', async () => {
    expect(await decide('aaaa')).toBe(true) // warm: the flag is loaded and matches a plain value
    const crafted = `${'a'.repeat(40)}!`
    const attacks = Array.from({ length: 8 }, () => decide(crafted))
    const latencies: number[] = []
    for (let i = 0; i < 5; i++) {
      latencies.push(await timed(() => fetch(`${svc.url}/_health`)))
      latencies.push(
        await timed(() =>
          fetch(`${svc.url}/capture/`, {
            method: 'POST',
            body: JSON.stringify({ api_key: PROJECT_KEY, event: 'during-attack', distinct_id: `d${i}` }),
          }),
        ),
      )
    }
    expect(await Promise.all(attacks)).toEqual(Array(8).fill(false))
    expect(Math.max(...latencies)).toBeLessThan(RESPONSIVE_MS)
    // a value long enough to take hours with backtracking is answered too
    expect(await decide(`${'a'.repeat(30_000)}!`)).toBe(false)
    expect(await decide('a'.repeat(30_000))).toBe(true)
  })
})
