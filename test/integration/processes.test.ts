// Several server processes (one per core, sharing a port with SO_REUSEPORT) share nothing but Postgres and
// ClickHouse: every acknowledged event is stored exactly once, definitions and persons stay consistent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { freshDataDir, freshEnv, PERSONAL_KEY } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { eventually, startLoad, storedOnce } from '../chaos/load'

let a: ServiceProcess
let b: ServiceProcess
let env: Record<string, string>
beforeAll(async () => {
  env = { ...(await freshEnv({ postgres: 'real', clickhouse: 'real' })), REUSE_PORT: 'true', FLUSH_INTERVAL_MS: '50' }
  a = await spawnService(env)
  b = await spawnService({ ...env, DATA_DIR: await freshDataDir('real') }, { port: a.port })
})
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()])
})

describe('two processes on one port', () => {
  test('load through the shared port is spread over both, and stored exactly once', async () => {
    const load = startLoad(() => a.url, { concurrency: 8, batchSize: 25, retry: false })
    await Bun.sleep(2000)
    await load.stop()
    const served = async (s: ServiceProcess) => {
      const text = await (await fetch(`${s.url}/metrics`)).text()
      return Number(/^capture_events_total\{outcome="accepted"\} (\d+)/m.exec(text)?.[1] ?? 0)
    }
    // the same URL reaches either process; each counts what its own flush worker stored
    expect(load.acked.length).toBeGreaterThan(1000)
    expect(await storedOnce(env.CLICKHOUSE_URL, load)).toEqual({ missing: 0, duplicated: 0 })
    const counts = await Promise.all([served(a), served(b)])
    expect(counts[0] + counts[1]).toBeGreaterThanOrEqual(load.acked.length)
  })

  test('both learners write the same definitions and persons without conflicts', async () => {
    const sends = Array.from({ length: 40 }, (_, i) =>
      fetch(`${a.url}/batch/`, {
        method: 'POST',
        body: JSON.stringify({
          api_key: env.INIT_PROJECT_API_KEY,
          batch: [
            { event: 'shared event', properties: { distinct_id: `p-${i % 5}`, $set: { n: i } } },
            { event: '$identify', properties: { distinct_id: `user-${i % 5}`, $anon_distinct_id: `p-${i % 5}` } },
          ],
        }),
      }),
    )
    expect((await Promise.all(sends)).every((r) => r.status === 200)).toBe(true)
    const api = async (path: string) => (await (await fetch(`${a.url}${path}`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })).json()) as any
    const settled = await eventually(async () => {
      const defs = await api('/api/projects/1/event_definitions/?search=shared')
      const persons = await Promise.all([0, 1, 2, 3, 4].map((i) => api(`/api/projects/1/persons/?distinct_id=p-${i}`)))
      return defs.count === 1 && persons.every((p) => p.results[0]?.distinct_ids.length === 2)
    }, 30_000)
    expect(settled).toBe(true)
    for (let i = 0; i < 5; i++) {
      const p = await api(`/api/projects/1/persons/?distinct_id=user-${i}`)
      expect(p.count).toBe(1)
      expect(p.results[0].distinct_ids).toEqual([`p-${i}`, `user-${i}`])
    }
  })
})
