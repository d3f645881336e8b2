// Two processes on one Postgres, one project filled with flags of ~1 MB through the first until the project's
// footprint limit refuses more (before: 40 such flags took the writer to 978 MB and the other to 835 MB). Both
// processes then hold the project compiled (a /flags answer each); their resident memory is measured and must stay
// within a bound proportional to the limit, whatever a key holder tries.
import { describe, expect, test } from 'bun:test'
import { PROJECT_LIMITS } from '../../src/flags/project-budget'
import type { ServiceProcess } from '../helpers/spawn-service'
import { PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { twoProcessesOnOnePostgres } from '../helpers/two-processes'

// a fresh connection each time: the other process sits idle for the ~30 s of flag writes, and a pooled connection to
// it may be closed by its idle timeout just as it is reused (ECONNRESET)
const rss = async (p: ServiceProcess) => {
  const text = await (await fetch(`${p.url}/metrics`, { keepalive: false })).text()
  const line = text.split('\n').find((l) => l.startsWith('process_resident_memory_bytes '))
  return Number(line?.split(' ')[1])
}
const MB = (n: number) => Math.round(n / 1024 / 1024)
const big = (i: number) => ({
  key: `big-${i}`,
  filters: { groups: Array.from({ length: 100 }, (_, g) => ({ properties: Array.from({ length: 9 }, (_, k) => ({ key: `p${g}-${k}`, type: 'person', operator: 'exact', value: `${i}`.padEnd(1000, 'v') })), rollout_percentage: 100 })) },
})

describe('flag memory of two processes', () => {
  const pair = twoProcessesOnOnePostgres()

  test('40 flags of ~1 MB: refused past the limit; both processes stay bounded', async () => {
    const { a, b } = pair
    const flags = (p: ServiceProcess) => fetch(`${p.url}/flags/?v=2`, { method: 'POST', keepalive: false, body: JSON.stringify({ token: PROJECT_KEY, distinct_id: 'someone' }) })
    await Promise.all([flags(a), flags(b)])
    const before = { a: await rss(a), b: await rss(b) }
    let accepted = 0
    for (let i = 0; i < 40; i++) {
      const r = await fetch(`${a.url}/api/projects/1/feature_flags/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(big(i)),
      })
      if (r.status === 400) break
      expect(r.status).toBe(201)
      accepted++
    }
    expect(accepted).toBeLessThan(40)
    for (let i = 0; i < 3; i++) expect((await Promise.all([flags(a), flags(b)])).map((r) => r.status)).toEqual([200, 200])
    const after = { a: await rss(a), b: await rss(b) }
    console.log(
      `${accepted} flags of ~1 MB accepted (limit ${MB(PROJECT_LIMITS.footprintBytes)} MB); RSS writer ${MB(before.a)} → ${MB(after.a)} MB, ` +
        `other ${MB(before.b)} → ${MB(after.b)} MB`,
    )
    // what a full project costs a process: a small multiple of its footprint (the JSON, the compiled flags, the
    // answers' caches), never the gigabytes of before
    for (const p of ['a', 'b'] as const) expect(after[p] - before[p]).toBeLessThan(PROJECT_LIMITS.footprintBytes * 24)
  })
})
