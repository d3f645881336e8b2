// Decide: 50 flags of mixed kinds created through the REST API, then wrk posting /decide/?v=3 for random
// distinct ids with person (and group) property overrides, against a bare Bun.serve that parses the JSON
// body and echoes an answer, in the same run. Also: peak RSS, and a row where no overrides are sent so each
// request reads the stored person (what a browser client without person_properties costs), and a row where 10 of the
// 50 flags target cohorts (decide-cohorts.ts).
import { rmSync } from 'node:fs'
import { decideCohortsRun } from './decide-cohorts'
import { rssMb, sampler, startBaseline, startService, table, tempDir, wrk, type WrkResult } from './lib'

const KEY = 'phc_bench_decide_project_01'
const PERSONAL = 'phx_bench_decide_personal_01'
const CONNECTIONS = 32
const VARIANTS = 64

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

/** Request bodies as a server SDK sends them (posthog-node: token, distinct_id, groups, overrides). */
export function decideBodies(count: number, overrides = true): string[] {
  const r = rand(42)
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]
  return Array.from({ length: count }, (_, i) => {
    const distinctId = `user-${Math.floor(r() * 1e9)}`
    const company = `company-${Math.floor(r() * 1000)}`
    const body: Record<string, unknown> = { token: KEY, distinct_id: distinctId, groups: { company } }
    if (overrides) {
      body.person_properties = {
        distinct_id: distinctId,
        email: `user-${i}@company${i % 5}.com`,
        plan: pick(['free', 'pro', 'enterprise', 'startup']),
        country: pick(['US', 'DE', 'FR', 'GB', 'JP']),
        age: Math.floor(18 + r() * 50),
        signed_up_at: new Date(Date.now() - r() * 200 * 86_400_000).toISOString(),
      }
      body.group_properties = { company: { $group_key: company, seats: Math.floor(r() * 120) } }
    }
    body.geoip_disable = true
    return JSON.stringify(body)
  })
}

async function setUp(url: string): Promise<void> {
  for (const flag of benchFlags()) {
    const r = await fetch(`${url}/api/projects/@current/feature_flags/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${PERSONAL}`, 'content-type': 'application/json' },
      body: JSON.stringify(flag),
    })
    if (r.status !== 201) throw new Error(`creating ${flag.key}: ${r.status} ${await r.text()}`)
  }
  // the group type, as ingestion would have learned it from a $groupidentify
  const capture = await fetch(`${url}/capture/`, {
    method: 'POST',
    body: JSON.stringify({ api_key: KEY, event: '$groupidentify', distinct_id: 'setup', properties: { $group_type: 'company', $group_key: 'company-1', $group_set: { seats: 10 } } }),
  })
  if (capture.status !== 200) throw new Error(`capture: ${capture.status}`)
  // a stored person for the no-overrides row
  await fetch(`${url}/capture/`, {
    method: 'POST',
    body: JSON.stringify({ api_key: KEY, event: '$identify', distinct_id: 'user-1', properties: { $set: { email: 'user-1@company1.com', plan: 'pro' } } }),
  })
  // check that a request answers every flag
  const probe = await fetch(`${url}/decide/?v=3`, { method: 'POST', body: decideBodies(1)[0] })
  const body = (await probe.json()) as { featureFlags?: Record<string, unknown> }
  if (probe.status !== 200 || Object.keys(body.featureFlags ?? {}).length !== 50) throw new Error(`probe: ${probe.status} ${JSON.stringify(body).slice(0, 300)}`)
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

export async function decideBench(seconds: number): Promise<string> {
  const bodies = decideBodies(VARIANTS)
  const base = await startBaseline('echo')
  const baseline = await wrk(`${base.url}/`, bodies, { seconds, connections: CONNECTIONS })
  await base.stop()
  const rows: Row[] = [row('bare Bun.serve (JSON.parse + echo)', baseline, baseline, '')]

  const dir = tempDir('phog-bench-decide-')
  const service = await startService({ DATA_DIR: dir, INIT_PROJECT_API_KEY: KEY, INIT_PERSONAL_API_KEY: PERSONAL, RATE_LIMIT_API_PER_MINUTE: '0' })
  try {
    await setUp(service.url)
    // let the flusher store the group type and the person
    for (let i = 0; i < 50; i++) {
      const le = await fetch(`${service.url}/api/feature_flag/local_evaluation?token=${KEY}`, { headers: { authorization: `Bearer ${PERSONAL}` } })
      if (Object.keys(((await le.json()) as { group_type_mapping: object }).group_type_mapping).length > 0) break
      await Bun.sleep(100)
    }
    let peak = 0
    const stop = sampler(200, () => {
      peak = Math.max(peak, rssMb(service.pid))
    })
    const withOverrides = await wrk(`${service.url}/decide/?v=3`, bodies, { seconds, connections: CONNECTIONS })
    await stop()
    rows.push(row('phog /decide?v=3, 50 flags, overrides (no Postgres read)', withOverrides, baseline, Math.round(peak)))
    peak = 0
    const stop2 = sampler(200, () => {
      peak = Math.max(peak, rssMb(service.pid))
    })
    const stored = await wrk(`${service.url}/decide/?v=3`, decideBodies(VARIANTS, false), { seconds, connections: CONNECTIONS })
    await stop2()
    rows.push(row('phog /decide?v=3, 50 flags, no overrides (stored person + group read, PGlite)', stored, baseline, Math.round(peak)))
  } finally {
    await service.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  const cohorts = await decideCohortsRun(seconds)
  rows.push(row('phog /decide?v=3, 50 flags, 10 on cohorts (5 dynamic, 5 static × 10,000 members; person + memberships read, PGlite)', cohorts.result, baseline, cohorts.peakRss))
  return `### decide: POST /decide/?v=3, ${VARIANTS} rotating bodies (~${Math.round(bodies.reduce((n, b) => n + b.length, 0) / bodies.length)} bytes), wrk 1 thread × ${CONNECTIONS} connections × ${seconds}s\n\n${table(rows)}\n`
}
