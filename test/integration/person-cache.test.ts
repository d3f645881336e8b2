// /decide keeps stored person properties in memory (people/person-cache.ts). The cache must never answer with a
// person older than its bound: at once on the process whose flush worker learned the change, within a second on
// every other process sharing Postgres. Real processes, real stores.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshDataDir, freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'

const FLAG = { key: 'pro-plan', filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } }

async function createFlag(p: ServiceProcess) {
  const r = await fetch(`${p.url}/api/projects/@current/feature_flags/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(FLAG),
  })
  expect(r.status).toBe(201)
}

async function setPlan(p: ServiceProcess, distinctId: string, plan: string) {
  const r = await fetch(`${p.url}/capture/`, {
    method: 'POST',
    body: JSON.stringify({ api_key: PROJECT_KEY, event: '$set', distinct_id: distinctId, properties: { $set: { plan } } }),
  })
  expect(r.status).toBe(200)
}

/** The returning-user call: a distinct id and nothing else. */
async function proPlan(p: ServiceProcess, distinctId: string): Promise<boolean> {
  const r = await fetch(`${p.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: distinctId }) })
  expect(r.status).toBe(200)
  return ((await r.json()) as any).featureFlags['pro-plan']
}

/** ms from now until `check` holds, polling every 5 ms; -1 after `withinMs` */
async function msUntil(check: () => Promise<boolean>, withinMs = 10_000): Promise<number> {
  const start = performance.now()
  while (performance.now() - start < withinMs) {
    if (await check()) return performance.now() - start
    await Bun.sleep(5)
  }
  return -1
}

async function cacheHits(p: ServiceProcess): Promise<number> {
  const text = await (await fetch(`${p.url}/metrics`)).text()
  return Number(/decide_person_cache_lookups_total\{outcome="hit"\} (\d+)/.exec(text)?.[1] ?? 0)
}

describe('the person cache across two processes sharing Postgres', () => {
  let a: ServiceProcess
  let b: ServiceProcess
  let sql: postgres.Sql
  beforeAll(async () => {
    const env = await freshEnv({ postgres: 'real', clickhouse: 'embedded' })
    sql = postgres(env.DATABASE_URL!, { max: 1, onnotice: () => undefined })
    a = await spawnService({ ...env, FLUSH_INTERVAL_MS: '20', LOG_LEVEL: 'warn' })
    b = await spawnService({ ...env, DATA_DIR: await freshDataDir('real'), FLUSH_INTERVAL_MS: '20', LOG_LEVEL: 'warn' })
    await createFlag(a)
  })
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop(), sql?.end()])
  })

  /** ms from the moment Postgres holds plan = `plan` for the person until `p` answers accordingly */
  async function staleness(writer: ServiceProcess, reader: ServiceProcess, id: string, plan: string): Promise<number> {
    await setPlan(writer, id, plan)
    const stored = await msUntil(async () => {
      const [row] = await sql`select p.properties->>'plan' as plan from persons p join person_distinct_ids d on d.person_id = p.id where d.distinct_id = ${id}`
      return row?.plan === plan
    })
    expect(stored).toBeGreaterThanOrEqual(0)
    return msUntil(async () => (await proPlan(reader, id)) === (plan === 'pro'), 5000)
  }

  test('a $set learned by one process reaches the other process\'s cached answer within a second', async () => {
    const id = 'returning-user'
    expect(await staleness(a, a, id, 'free')).toBeGreaterThanOrEqual(0)
    // both processes now hold the person (free) in memory, and answer from it
    expect(await proPlan(b, id)).toBe(false)
    const hits = await cacheHits(b)
    expect(await proPlan(b, id)).toBe(false)
    expect(await cacheHits(b)).toBeGreaterThan(hits)

    for (const [writer, plan] of [[a, 'pro'], [b, 'free'], [b, 'pro'], [a, 'free']] as const) {
      const other = writer === a ? b : a
      const sameProcess = await staleness(writer, writer, id, plan)
      const otherProcess = await msUntil(async () => (await proPlan(other, id)) === (plan === 'pro'), 5000)
      expect({ plan, sameProcess: sameProcess >= 0 && sameProcess < 1000, otherProcess: otherProcess >= 0 && otherProcess < 1000 }).toEqual({
        plan,
        sameProcess: true,
        otherProcess: true,
      })
    }
  })

  test('a merge ($identify) re-points every distinct id of the merged persons, cached or not', async () => {
    await setPlan(a, 'anon-123', 'free')
    expect(await staleness(a, b, 'anon-123', 'free')).toBeGreaterThanOrEqual(0)
    await setPlan(a, 'known-user', 'pro')
    expect(await staleness(a, b, 'known-user', 'pro')).toBeGreaterThanOrEqual(0)
    expect(await proPlan(b, 'anon-123')).toBe(false) // cached on B as free
    const r = await fetch(`${a.url}/capture/`, {
      method: 'POST',
      body: JSON.stringify({ api_key: PROJECT_KEY, event: '$identify', distinct_id: 'known-user', properties: { $anon_distinct_id: 'anon-123' } }),
    })
    expect(r.status).toBe(200)
    // anon-123 now belongs to known-user, whose plan is pro
    expect(await msUntil(() => proPlan(b, 'anon-123'), 5000)).toBeGreaterThanOrEqual(0)
  })
})

describe('the person cache on the embedded store (one process)', () => {
  let p: ServiceProcess
  beforeAll(async () => {
    p = await spawnService({ ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), FLUSH_INTERVAL_MS: '20', LOG_LEVEL: 'warn' })
    await createFlag(p)
  })
  afterAll(() => p?.stop())

  test('the flush worker\'s change reaches the cached answer at once', async () => {
    for (const plan of ['free', 'pro', 'free', 'pro']) {
      await setPlan(p, 'embedded-user', plan)
      const persons = async () => {
        const r = await fetch(`${p.url}/api/projects/@current/persons/?distinct_id=embedded-user`, { headers: { authorization: `Bearer ${PERSONAL_KEY}` } })
        return ((await r.json()) as any).results[0]?.properties.plan === plan
      }
      expect(await msUntil(persons)).toBeGreaterThanOrEqual(0)
      const ms = await msUntil(async () => (await proPlan(p, 'embedded-user')) === (plan === 'pro'), 5000)
      expect({ plan, ms: ms >= 0 && ms < 1000 }).toEqual({ plan, ms: true })
      expect(await proPlan(p, 'embedded-user')).toBe(plan === 'pro') // and it stays so (from memory)
    }
    expect(await cacheHits(p)).toBeGreaterThan(0)
  })
})
