// Several server processes (one per core, sharing a port with SO_REUSEPORT) share nothing but Postgres and
// ClickHouse: every acknowledged event is stored exactly once, definitions and persons stay consistent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { freshDataDir, freshEnv, PERSONAL_KEY } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { batchBody, eventually, startLoad, storedOnce } from '../chaos/load'

let a: ServiceProcess
let b: ServiceProcess
let env: Record<string, string>
beforeAll(async () => {
  // debug: each process logs every request it answers, with its pid, on its own stderr; that is how the test
  // tells the two apart (they share one port, so /metrics reaches either of them)
  env = { ...(await freshEnv({ postgres: 'real', clickhouse: 'real' })), REUSE_PORT: 'true', FLUSH_INTERVAL_MS: '50', LOG_LEVEL: 'debug' }
  a = await spawnService(env)
  b = await spawnService({ ...env, DATA_DIR: await freshDataDir('real') }, { port: a.port })
  // spawnService's health check on the shared port may have been answered by a: wait for b's own word
  const listening = await eventually(async () => b.logs().includes('"msg":"listening"'), 30_000)
  if (!listening) throw new Error(`the second process never listened:\n${b.logs().slice(-3000)}`)
})
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()])
})

/** The /batch/ requests this very process answered 200, from its own request log. */
function batchesAnswered(s: ServiceProcess): number {
  let n = 0
  for (const line of s.logs().split('\n')) {
    if (!line.includes('"msg":"request"')) continue
    const entry = JSON.parse(line) as { pid: number; method: string; path: string; status: number }
    if (entry.pid === s.pid && entry.method === 'POST' && entry.path === '/batch/' && entry.status === 200) n++
  }
  return n
}

describe('two processes on one port', () => {
  test('load through the shared port is spread over both, and stored exactly once', async () => {
    const load = startLoad(() => a.url, { concurrency: 8, batchSize: 25, retry: false })
    await Bun.sleep(2000)
    await load.stop()
    // The load's 8 keep-alive connections are each bound to one process; 40 more batches, each on a fresh
    // connection, make the kernel choose a process 40 more times (all on one side: 2^-39).
    const extra = { sent: [] as string[], acked: [] as string[] }
    for (let i = 0; i < 40; i++) {
      const uuids = Array.from({ length: 25 }, () => crypto.randomUUID())
      extra.sent.push(...uuids)
      const r = await fetch(`${a.url}/batch/`, { method: 'POST', body: batchBody(uuids), headers: { 'content-type': 'application/json' }, keepalive: false })
      if (r.status === 200) extra.acked.push(...uuids)
      await r.arrayBuffer()
    }
    expect(extra.acked.length).toBe(extra.sent.length)
    const all = { sent: [...load.sent, ...extra.sent], acked: [...load.acked, ...extra.acked] }
    // the same URL reaches either process
    expect(load.acked.length).toBeGreaterThan(1000)
    expect(await storedOnce(env.CLICKHOUSE_URL, all)).toEqual({ missing: 0, duplicated: 0 })
    // each process answered part of the load, and together exactly the batches acknowledged
    const batches = all.acked.length / 25
    const logged = await eventually(async () => batchesAnswered(a) + batchesAnswered(b) >= batches, 10_000)
    if (!logged || batchesAnswered(a) === 0 || batchesAnswered(b) === 0) {
      console.error(`a (pid ${a.pid}):\n${a.logs().slice(-3000)}\nb (pid ${b.pid}):\n${b.logs().slice(-3000)}`)
    }
    expect(batchesAnswered(a)).toBeGreaterThan(0)
    expect(batchesAnswered(b)).toBeGreaterThan(0)
    expect(batchesAnswered(a) + batchesAnswered(b)).toBe(batches)
    console.log(`processes: ${batchesAnswered(a)} batches answered by pid ${a.pid}, ${batchesAnswered(b)} by pid ${b.pid}`)
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
