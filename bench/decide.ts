// Decide: 50 flags of mixed kinds created through the REST API, then wrk posting /decide/?v=3, against a bare
// Bun.serve that parses the JSON body and echoes an answer, in the same run. Rows: overrides in the body (what
// posthog-node sends); returning users (distinct_id only, persons stored by ingestion: what posthog-js sends),
// checked first against the same requests with the properties as overrides; on the embedded store and on real
// Postgres; the same with 500 flags; and 50 flags of which 10 target cohorts (decide-cohorts.ts). Peak RSS of each.
import { rmSync } from 'node:fs'
import { startPostgres } from '../test/helpers/postgres-server'
import { decideCohortsRun } from './decide-cohorts'
import { metric, rssMb, sampler, startBaseline, startService, table, tempDir, wrk, type Proc, type WrkResult } from './lib'

export const KEY = 'phc_bench_decide_project_01'
export const PERSONAL = 'phx_bench_decide_personal_01'
const CONNECTIONS = 32
export const VARIANTS = 64

const person = (key: string, value: unknown, operator = 'exact') => ({ key, value, operator, type: 'person' })
const condition = (properties: unknown[], rollout: number | null = null, variant?: string) => ({ properties, rollout_percentage: rollout, ...(variant ? { variant } : {}) })

/** 50 flags: rollouts, property matches of every operator family, multivariates with payloads, group flags. */
export function benchFlags(): Record<string, unknown>[] {
  const flags: Record<string, unknown>[] = []
  for (let i = 0; i < 10; i++) flags.push({ key: `rollout-${i}`, filters: { groups: [condition([], i * 10 + 5)] } })
  const plans = ['free', 'pro', 'enterprise', 'startup']
  for (let i = 0; i < 10; i++) {
    flags.push({
      key: `plan-${i}`,
      filters: { groups: [condition([person('plan', i % 2 ? plans[i % 4] : [plans[i % 4], plans[(i + 1) % 4]], i % 3 === 0 ? 'is_not' : 'exact')], 50 + i * 5)] },
    })
  }
  for (let i = 0; i < 8; i++) {
    const p = i % 2 ? person('email', `@company${i % 4}.com`, 'icontains') : person('email', `^user-\\d*${i}@`, 'regex')
    flags.push({ key: `email-${i}`, filters: { groups: [condition([p]), condition([person('country', ['US', 'DE', 'FR'])], 30)] } })
  }
  for (let i = 0; i < 6; i++) {
    flags.push({ key: `age-${i}`, filters: { groups: [condition([person('age', String(18 + i * 7), i % 2 ? 'gt' : 'lte'), person('plan', 'free', 'is_not')])] } })
  }
  for (let i = 0; i < 6; i++) {
    flags.push({
      key: `experiment-${i}`,
      filters: {
        groups: [condition([person('country', 'US')], 100, 'test'), condition([], 80)],
        multivariate: { variants: [{ key: 'control', rollout_percentage: 50 }, { key: 'test', rollout_percentage: 30 }, { key: 'holdout', rollout_percentage: 20 }] },
        payloads: { control: '{"color":"blue"}', test: '{"color":"green","size":2}' },
      },
    })
  }
  for (let i = 0; i < 5; i++) {
    flags.push({ key: `recent-${i}`, filters: { groups: [condition([person('signed_up_at', `-${(i + 1) * 30}d`, 'is_date_after')])] } })
  }
  for (let i = 0; i < 5; i++) {
    flags.push({
      key: `company-${i}`,
      filters: {
        aggregation_group_type_index: 0,
        groups: [condition([{ key: 'seats', value: String(i * 20), operator: 'gte', type: 'group', group_type_index: 0 }], 60)],
      },
    })
  }
  return flags
}

function rand(seed: number): () => number {
  let s = seed >>> 0
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
}

/** The person properties of bench user `i` (what an SDK would send as overrides, and what ingestion stores). */
function personOf(i: number, r: () => number, distinctId: string): Record<string, unknown> {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]
  return {
    distinct_id: distinctId,
    email: `user-${i}@company${i % 5}.com`,
    plan: pick(['free', 'pro', 'enterprise', 'startup']),
    country: pick(['US', 'DE', 'FR', 'GB', 'JP']),
    age: Math.floor(18 + r() * 50),
    signed_up_at: new Date(Date.now() - r() * 200 * 86_400_000).toISOString(),
  }
}

/** Request bodies as a server SDK sends them (posthog-node: token, distinct_id, groups, overrides). */
export function decideBodies(count: number, overrides = true): string[] {
  const r = rand(42)
  return Array.from({ length: count }, (_, i) => {
    const distinctId = `user-${Math.floor(r() * 1e9)}`
    const company = `company-${Math.floor(r() * 1000)}`
    const body: Record<string, unknown> = { token: KEY, distinct_id: distinctId, groups: { company } }
    if (overrides) {
      body.person_properties = personOf(i, r, distinctId)
      body.group_properties = { company: { $group_key: company, seats: Math.floor(r() * 120) } }
    }
    body.geoip_disable = true
    return JSON.stringify(body)
  })
}

const RETURNING = 2000

/** Returning users: persons ingestion stored ($identify + $set), the properties each was given. */
function returningUsers(): { distinctId: string; properties: Record<string, unknown> }[] {
  const r = rand(7)
  return Array.from({ length: RETURNING }, (_, i) => {
    const distinctId = `returning-${i}`
    const { distinct_id: _omitted, ...properties } = personOf(i, r, distinctId)
    return { distinctId, properties }
  })
}

async function post(url: string, path: string, body: unknown): Promise<Response> {
  const r = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(body) })
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`)
  return r
}

async function createFlags(url: string, flags: Record<string, unknown>[]): Promise<void> {
  for (const flag of flags) {
    const r = await fetch(`${url}/api/projects/@current/feature_flags/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PERSONAL}`, 'content-type': 'application/json' },
      body: JSON.stringify(flag),
    })
    if (r.status !== 201) throw new Error(`creating ${flag.key}: ${r.status} ${await r.text()}`)
  }
}

export async function setUp(url: string, flags: Record<string, unknown>[]): Promise<void> {
  await createFlags(url, flags)
  // the group type, as ingestion would have learned it from a $groupidentify
  await post(url, '/capture/', { api_key: KEY, event: '$groupidentify', distinct_id: 'setup', properties: { $group_type: 'company', $group_key: 'company-1', $group_set: { seats: 10 } } })
  // the returning users, stored by ingestion
  const users = returningUsers()
  for (let i = 0; i < users.length; i += 500) {
    const batch = users.slice(i, i + 500).map((u) => ({ event: '$identify', distinct_id: u.distinctId, properties: { $set: u.properties } }))
    await post(url, '/batch/', { api_key: KEY, batch })
  }
  // wait until the flush worker has stored the group type and every person
  const last = users[users.length - 1]!
  for (let i = 0; ; i++) {
    const persons = await fetch(`${url}/api/projects/@current/persons/?distinct_id=${last.distinctId}`, { headers: { authorization: `Bearer ${PERSONAL}` } })
    const le = await fetch(`${url}/api/feature_flag/local_evaluation?token=${KEY}`, { headers: { authorization: `Bearer ${PERSONAL}` } })
    const learned = ((await persons.json()) as { results: unknown[] }).results.length > 0
    if (learned && Object.keys(((await le.json()) as { group_type_mapping: object }).group_type_mapping).length > 0) break
    if (i > 600) throw new Error('persons were not learned within a minute')
    await Bun.sleep(100)
  }
  // check that a request answers every flag
  const probe = await post(url, '/decide/?v=3', JSON.parse(decideBodies(1)[0]))
  const body = (await probe.json()) as { featureFlags?: Record<string, unknown> }
  if (Object.keys(body.featureFlags ?? {}).length !== flags.length) throw new Error(`probe: ${JSON.stringify(body).slice(0, 300)}`)
}

/**
 * The returning-user call must give what the same call gives with the person's properties as overrides: a
 * cache that answers wrong flags is worse than a slow one. Asked twice each (the second from memory).
 */
async function checkReturningAnswers(url: string): Promise<void> {
  const users = returningUsers()
  for (let i = 0; i < users.length; i += 40) {
    const u = users[i]!
    const bare = { token: KEY, distinct_id: u.distinctId }
    const expected = await (await post(url, '/decide/?v=3', { ...bare, person_properties: u.properties })).json()
    for (let round = 0; round < 2; round++) {
      const got = await (await post(url, '/decide/?v=3', bare)).json()
      const a = JSON.stringify((got as any).featureFlags)
      const b = JSON.stringify((expected as any).featureFlags)
      if (a !== b) throw new Error(`returning user ${u.distinctId}: stored answer ${a} differs from overrides ${b}`)
    }
  }
}

export const returningBodies = () => {
  const r = rand(99)
  return Array.from({ length: VARIANTS }, () => JSON.stringify({ token: KEY, distinct_id: `returning-${Math.floor(r() * RETURNING)}` }))
}

/** 500 flags: the 50 bench flags ten times over, under other keys. */
export function manyFlags(): Record<string, unknown>[] {
  return Array.from({ length: 10 }, (_, copy) => benchFlags().map((f) => ({ ...f, key: `${f.key}-c${copy}` }))).flat()
}

type Row = Record<string, string | number>

function row(target: string, result: WrkResult, baseline: WrkResult, peakRss: number | string): Row {
  return {
    target,
    'req/s': Math.round(result.rps),
    'p50 ms': result.p50,
    'p99 ms': result.p99,
    'vs bare req/s': `${(result.rps / baseline.rps).toFixed(2)}x`,
    'vs bare p99': `${(result.p99 / baseline.p99).toFixed(2)}x`,
    'non-2xx': result.non2xx + result.errors,
    'peak RSS MB': peakRss,
  }
}

/** wrk against the service, sampling its RSS meanwhile. */
async function measured(service: Proc, bodies: string[], seconds: number): Promise<[WrkResult, number]> {
  let peak = 0
  const stop = sampler(200, () => {
    peak = Math.max(peak, rssMb(service.pid))
  })
  const result = await wrk(`${service.url}/decide/?v=3`, bodies, { seconds, connections: CONNECTIONS })
  await stop()
  return [result, Math.round(peak)]
}

/** One service (embedded stores, or real Postgres when databaseUrl is given) through every request kind. */
async function serviceRows(label: string, env: Record<string, string>, flags: Record<string, unknown>[], seconds: number, baseline: WrkResult, kinds: ('overrides' | 'returning' | 'stored')[]): Promise<Row[]> {
  const dir = tempDir('phog-bench-decide-')
  const service = await startService({ DATA_DIR: dir, INIT_PROJECT_API_KEY: KEY, INIT_PERSONAL_API_KEY: PERSONAL, RATE_LIMIT_API_PER_MINUTE: '0', ...env })
  const rows: Row[] = []
  try {
    await setUp(service.url, flags)
    if (kinds.includes('overrides')) {
      const [r, peak] = await measured(service, decideBodies(VARIANTS), seconds)
      rows.push(row(`phog /decide?v=3, ${flags.length} flags, person_properties in the body, ${label}`, r, baseline, peak))
    }
    if (kinds.includes('returning')) {
      await checkReturningAnswers(service.url)
      const [r, peak] = await measured(service, returningBodies(), seconds)
      const hits = await metric(service.url, 'decide_person_cache_lookups_total')
      rows.push(row(`phog /decide?v=3, ${flags.length} flags, returning users (distinct_id only, ${RETURNING} stored persons), ${label}`, r, baseline, peak))
      if (hits === 0) throw new Error('the person cache was never used')
    }
    if (kinds.includes('stored')) {
      const [r, peak] = await measured(service, decideBodies(VARIANTS, false), seconds)
      rows.push(row(`phog /decide?v=3, ${flags.length} flags, unknown users with groups (person + group read), ${label}`, r, baseline, peak))
    }
  } finally {
    await service.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  return rows
}

export async function decideBench(seconds: number): Promise<string> {
  const bodies = decideBodies(VARIANTS)
  const base = await startBaseline('echo')
  const baseline = await wrk(`${base.url}/`, bodies, { seconds, connections: CONNECTIONS })
  await base.stop()
  const rows: Row[] = [row('bare Bun.serve (JSON.parse + echo)', baseline, baseline, '')]
  rows.push(...(await serviceRows('embedded', {}, benchFlags(), seconds, baseline, ['overrides', 'returning', 'stored'])))
  const pg = await startPostgres()
  try {
    rows.push(...(await serviceRows('Postgres', { DATABASE_URL: await pg.createDatabase() }, benchFlags(), seconds, baseline, ['returning'])))
  } finally {
    await pg.destroy()
  }
  const many = await serviceRows('embedded', {}, manyFlags(), seconds, baseline, ['overrides', 'returning'])
  rows.push(...many)
  const cohorts = await decideCohortsRun(seconds)
  rows.push(row('phog /decide?v=3, 50 flags, 10 on cohorts (5 dynamic, 5 static × 10,000 members), embedded', cohorts.result, baseline, cohorts.peakRss))
  const per = (fifty: Row | undefined, fiveHundred: Row | undefined) =>
    fifty && fiveHundred ? ((Number(fifty['req/s']) / Number(fiveHundred['req/s'])) || 0).toFixed(1) : '?'
  const note = `req/s from 50 to 500 flags falls ${per(rows[1], many[0])}× with overrides and ${per(rows[2], many[1])}× for returning users (10× the flags; a flat cost per flag would be 10×).`
  return `### decide: POST /decide/?v=3, ${VARIANTS} rotating bodies (~${Math.round(bodies.reduce((n, b) => n + b.length, 0) / bodies.length)} bytes with overrides), wrk 1 thread × ${CONNECTIONS} connections × ${seconds}s\n\n${table(rows)}\n\n${note}\n`
}
