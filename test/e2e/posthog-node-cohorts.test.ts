// posthog-node 5.x, unmodified, evaluating flags on cohorts and on other flags locally from this server's
// local_evaluation (send_cohorts, dependency chains), agreeing with the server, and asking the server for a flag
// on a static cohort (which local_evaluation leaves out on purpose).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PostHog } from 'posthog-node'
import { PERSONAL_KEY, PROJECT_KEY, startService, type E2EService } from './service'

let service: E2EService

const person = (key: string, value: unknown, operator = 'exact') => ({ key, type: 'person', value, operator })
const tree = (...groups: unknown[][]) => ({ properties: { type: 'OR', values: groups.map((values) => ({ type: 'AND', values })) } })
const onCohort = (id: number, operator?: string) => ({
  groups: [{ properties: [{ key: 'id', type: 'cohort', value: id, ...(operator ? { operator } : {}) }], rollout_percentage: 100 }],
})
const onFlag = (id: number, value: unknown) => ({ groups: [{ properties: [{ key: String(id), type: 'flag', value, operator: 'flag_evaluates_to' }], rollout_percentage: 100 }] })

/** POST /flags answered so far (http_requests_total), to tell local answers from server ones */
async function flagsRequests(): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text()
  let n = 0
  for (const m of text.matchAll(/^http_requests_total\{([^}]*)\} ([0-9.e+-]+)$/gm)) if (m[1].includes('route="/flags') && m[1].includes('method="POST"')) n += Number(m[2])
  return n
}

async function create(path: string, body: unknown): Promise<number> {
  const r = await service.api(path, { method: 'POST', json: body })
  expect(r.status).toBe(201)
  return r.body.id
}

const KEYS = ['e2e-pro', 'e2e-not-pro', 'e2e-pro-germans', 'e2e-base', 'e2e-dep-red', 'e2e-dep-pro', 'e2e-dep-off']

beforeAll(async () => {
  service = await startService()
  // a person the static cohort will hold, as ingestion learns it
  const capture = await fetch(`${service.url}/capture/`, {
    method: 'POST',
    body: JSON.stringify({ api_key: PROJECT_KEY, event: '$identify', distinct_id: 'beta-tester', properties: { $set: { plan: 'free' } } }),
  })
  expect(capture.status).toBe(200)
  let uuid: string | undefined
  for (let i = 0; i < 300 && !uuid; i++) {
    uuid = (await service.api('/api/projects/1/persons/?distinct_id=beta-tester')).body.results[0]?.uuid
    if (!uuid) await Bun.sleep(50)
  }
  expect(uuid).toBeDefined()

  const pro = await create('/api/projects/1/cohorts/', { name: 'Pro', filters: tree([person('plan', 'pro')]) })
  const germans = await create('/api/projects/1/cohorts/', {
    name: 'Pro Germans',
    filters: tree([{ key: 'id', type: 'cohort', value: pro }, person('country', 'DE')], [person('email', '@example.de', 'icontains')]),
  })
  const beta = await create('/api/projects/1/cohorts/', { name: 'Beta', is_static: true, _create_static_person_ids: [uuid] })
  const flag = (key: string, filters: unknown) => create('/api/projects/1/feature_flags/', { key, filters })
  const proFlag = await flag('e2e-pro', onCohort(pro))
  await flag('e2e-not-pro', onCohort(pro, 'not_in'))
  await flag('e2e-pro-germans', onCohort(germans))
  await flag('e2e-beta', onCohort(beta))
  const base = await flag('e2e-base', { groups: [{ properties: [], rollout_percentage: 100 }], multivariate: { variants: [{ key: 'red', rollout_percentage: 60 }, { key: 'blue', rollout_percentage: 40 }] } })
  const off = await flag('e2e-off', { groups: [{ properties: [], rollout_percentage: 0 }] })
  await flag('e2e-dep-red', onFlag(base, 'red'))
  await flag('e2e-dep-pro', onFlag(proFlag, true))
  await flag('e2e-dep-off', onFlag(off, false))
})
afterAll(async () => {
  await service?.stop()
})

describe('posthog-node 5.x with cohorts and flag dependencies', () => {
  test('local evaluation matches cohorts (not_in and nesting too) and dependencies without asking the server', async () => {
    const client = new PostHog(PROJECT_KEY, { host: service.url, personalApiKey: PERSONAL_KEY, featureFlagsPollingInterval: 60_000, flushAt: 1000 })
    try {
      await (client as unknown as { reloadFeatureFlags(): Promise<void> }).reloadFeatureFlags()
      const before = await flagsRequests()
      const local = (key: string, personProperties: Record<string, unknown>) => client.getFeatureFlag(key, 'someone', { personProperties, onlyEvaluateLocally: true })
      expect(await local('e2e-pro', { plan: 'pro' })).toBe(true)
      expect(await local('e2e-pro', { plan: 'free' })).toBe(false)
      expect(await local('e2e-not-pro', { plan: 'free' })).toBe(true)
      expect(await local('e2e-not-pro', { plan: 'pro' })).toBe(false)
      expect(await local('e2e-pro-germans', { plan: 'pro', country: 'DE', email: 'a@b.org' })).toBe(true)
      expect(await local('e2e-pro-germans', { plan: 'pro', country: 'FR', email: 'a@example.de' })).toBe(true)
      expect(await local('e2e-pro-germans', { plan: 'free', country: 'DE', email: 'a@b.org' })).toBe(false)
      expect(await local('e2e-dep-pro', { plan: 'pro' })).toBe(true)
      expect(await local('e2e-dep-pro', { plan: 'free' })).toBe(false)
      expect(await local('e2e-dep-off', {})).toBe(true)
      // a static cohort is not in local_evaluation: locally undecidable
      expect(await local('e2e-beta', { plan: 'free' })).toBeUndefined()
      expect(await flagsRequests()).toBe(before)
    } finally {
      await client.shutdown()
    }
  })

  test('local and server evaluation agree for 200 persons', async () => {
    const local = new PostHog(PROJECT_KEY, { host: service.url, personalApiKey: PERSONAL_KEY, featureFlagsPollingInterval: 60_000, flushAt: 1000 })
    const remote = new PostHog(PROJECT_KEY, { host: service.url, flushAt: 1000 })
    try {
      await (local as unknown as { reloadFeatureFlags(): Promise<void> }).reloadFeatureFlags()
      const disagreements: string[] = []
      let dependentOn = 0
      for (let i = 0; i < 200; i++) {
        const id = `agree-${i}`
        const personProperties = { plan: ['pro', 'free', 'team'][i % 3], country: i % 2 ? 'DE' : 'FR', email: i % 5 ? `u${i}@x.org` : `u${i}@example.de` }
        const locally = await local.getAllFlags(id, { personProperties, onlyEvaluateLocally: true })
        const remotely = await remote.getAllFlags(id, { personProperties })
        for (const key of KEYS) if (locally[key] !== remotely[key]) disagreements.push(`${id} ${key}: local ${locally[key]} remote ${remotely[key]}`)
        if (locally['e2e-dep-red'] === true) dependentOn++
      }
      expect(disagreements).toEqual([])
      // the variant split reached the dependent both ways (60 % red)
      expect(dependentOn).toBeGreaterThan(0)
      expect(dependentOn).toBeLessThan(200)
    } finally {
      await Promise.all([local.shutdown(), remote.shutdown()])
    }
  })

  test('a flag on a static cohort falls back to the server, which knows the members', async () => {
    const client = new PostHog(PROJECT_KEY, { host: service.url, personalApiKey: PERSONAL_KEY, featureFlagsPollingInterval: 60_000, flushAt: 1000 })
    try {
      await (client as unknown as { reloadFeatureFlags(): Promise<void> }).reloadFeatureFlags()
      const before = await flagsRequests()
      expect(await client.getFeatureFlag('e2e-beta', 'beta-tester')).toBe(true)
      expect(await client.getFeatureFlag('e2e-beta', 'not-a-tester')).toBe(false)
      expect(await flagsRequests()).toBeGreaterThanOrEqual(before + 2)
    } finally {
      await client.shutdown()
    }
  })
})
