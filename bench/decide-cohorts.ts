// Decide with cohorts: 50 flags, 10 of which target cohorts (5 dynamic cohorts on person properties, 5 static
// cohorts of 10,000 members each, out of 20,000 persons learned from $identify events), wrk posting /decide/?v=3
// for distinct ids of those persons (and some unknown ones) with person property overrides. Every request reads
// the person and its static cohorts (one query); the dynamic cohorts are decided on the overrides.
import { rmSync } from 'node:fs'
import { benchFlags } from './decide'
import { rssMb, sampler, startService, tempDir, wrk, type WrkResult } from './lib'

const KEY = 'phc_bench_cohorts_project_01'
const PERSONAL = 'phx_bench_cohorts_personal_01'
const PERSONS = 20_000
const MEMBERS = 10_000
const STATIC_COHORTS = 5
const CONNECTIONS = 32
const VARIANTS = 64

const person = (key: string, value: unknown, operator = 'exact') => ({ key, value, operator, type: 'person' })
const tree = (...values: unknown[]) => ({ properties: { type: 'OR', values: [{ type: 'AND', values }] } })
const PLANS = ['free', 'pro', 'enterprise', 'startup']
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'JP']

/** The 5 dynamic cohorts: on the properties the request bodies override. */
const DYNAMIC_COHORTS = [
  tree(person('plan', 'pro')),
  tree(person('country', ['US', 'GB'])),
  tree(person('email', '@company1.com', 'icontains'), person('age', '30', 'gt')),
  { properties: { type: 'OR', values: [{ type: 'AND', values: [person('plan', 'enterprise')] }, { type: 'AND', values: [person('country', 'DE'), person('plan', 'free', 'is_not')] }] } },
  tree(person('signed_up_at', '-90d', 'is_date_after')),
]

function rand(seed: number): () => number {
  let s = seed >>> 0
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32)
}

/** Members of static cohort j: a window of 10,000 of the 20,000 persons, shifted by 4,000 per cohort. */
const memberIds = (j: number) => Array.from({ length: MEMBERS }, (_, i) => `member-${(i + j * 4000) % PERSONS}`)

export function cohortBodies(count: number): string[] {
  const r = rand(7)
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]
  return Array.from({ length: count }, (_, i) => {
    // 4 in 5 are known persons, the rest never seen
    const distinctId = r() < 0.8 ? `member-${Math.floor(r() * PERSONS)}` : `stranger-${Math.floor(r() * 1e9)}`
    return JSON.stringify({
      token: KEY,
      distinct_id: distinctId,
      person_properties: {
        distinct_id: distinctId,
        email: `user-${i}@company${i % 5}.com`,
        plan: pick(PLANS),
        country: pick(COUNTRIES),
        age: Math.floor(18 + r() * 50),
        signed_up_at: new Date(Date.now() - r() * 200 * 86_400_000).toISOString(),
      },
      geoip_disable: true,
    })
  })
}

async function api(url: string, path: string, init: { method?: string; json?: unknown; body?: FormData | string }): Promise<any> {
  const headers: Record<string, string> = { authorization: `Bearer ${PERSONAL}` }
  if (init.json !== undefined) headers['content-type'] = 'application/json'
  const r = await fetch(`${url}${path}`, { method: init.method ?? 'GET', headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body })
  const text = await r.text()
  if (r.status >= 300) throw new Error(`${init.method ?? 'GET'} ${path}: ${r.status} ${text.slice(0, 300)}`)
  return JSON.parse(text)
}

async function setUp(url: string): Promise<void> {
  // 20,000 persons, as ingestion learns them from $identify
  for (let start = 0; start < PERSONS; start += 1000) {
    const batch = Array.from({ length: 1000 }, (_, k) => ({
      event: '$identify',
      properties: { distinct_id: `member-${start + k}`, $set: { plan: PLANS[(start + k) % 4], country: COUNTRIES[(start + k) % 5] } },
    }))
    const r = await fetch(`${url}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: KEY, batch }) })
    if (r.status !== 200) throw new Error(`batch: ${r.status}`)
  }
  const deadline = Date.now() + 120_000
  while ((await api(url, '/api/projects/@current/persons/?limit=1', {})).count < PERSONS) {
    if (Date.now() > deadline) throw new Error('persons were not learned in time')
    await Bun.sleep(200)
  }
  const flags = benchFlags().slice(0, 40) // rollouts, property matches, multivariates: no group flags
  for (let j = 0; j < DYNAMIC_COHORTS.length; j++) {
    const cohort = await api(url, '/api/projects/@current/cohorts/', { method: 'POST', json: { name: `dynamic-${j}`, filters: DYNAMIC_COHORTS[j] } })
    flags.push({ key: `dynamic-cohort-${j}`, filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort.id }], rollout_percentage: 100 }] } })
  }
  for (let j = 0; j < STATIC_COHORTS; j++) {
    const form = new FormData()
    form.append('name', `static-${j}`)
    form.append('is_static', 'true')
    form.append('csv', new File([memberIds(j).join('\n')], `static-${j}.csv`))
    const cohort = await api(url, '/api/projects/@current/cohorts/', { method: 'POST', body: form })
    if (cohort.count !== MEMBERS) throw new Error(`static-${j} has ${cohort.count} members`)
    flags.push({ key: `static-cohort-${j}`, filters: { groups: [{ properties: [{ key: 'id', type: 'cohort', value: cohort.id, operator: j % 2 ? 'not_in' : 'in' }], rollout_percentage: 100 }] } })
  }
  for (const flag of flags) await api(url, '/api/projects/@current/feature_flags/', { method: 'POST', json: flag })
  // every request answers all 50 flags
  const probe = await fetch(`${url}/decide/?v=3`, { method: 'POST', body: cohortBodies(1)[0] })
  const body = (await probe.json()) as { featureFlags?: Record<string, unknown>; errorsWhileComputingFlags?: boolean }
  if (probe.status !== 200 || Object.keys(body.featureFlags ?? {}).length !== 50 || body.errorsWhileComputingFlags) {
    throw new Error(`probe: ${probe.status} ${JSON.stringify(body).slice(0, 300)}`)
  }
}

/** The row: /decide with cohort flags, on its own service (setting up 20,000 persons takes a while). */
export async function decideCohortsRun(seconds: number): Promise<{ result: WrkResult; peakRss: number; bodyBytes: number }> {
  const dir = tempDir('phog-bench-cohorts-')
  const service = await startService({ DATA_DIR: dir, INIT_PROJECT_API_KEY: KEY, INIT_PERSONAL_API_KEY: PERSONAL, RATE_LIMIT_API_PER_MINUTE: '0', FLUSH_INTERVAL_MS: '100' })
  try {
    await setUp(service.url)
    const bodies = cohortBodies(VARIANTS)
    let peak = 0
    const stop = sampler(200, () => {
      peak = Math.max(peak, rssMb(service.pid))
    })
    const result = await wrk(`${service.url}/decide/?v=3`, bodies, { seconds, connections: CONNECTIONS })
    await stop()
    return { result, peakRss: Math.round(peak), bodyBytes: Math.round(bodies.reduce((n, b) => n + b.length, 0) / bodies.length) }
  } finally {
    await service.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
