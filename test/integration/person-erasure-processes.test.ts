// A person erased through one process is gone on every process sharing Postgres: the other process's /decide
// stops answering from its cached properties (NOTIFY at commit; polled with a one-second bound, the contract
// for changes that cross processes), and a capture through the other process after that makes a new person
// (its learner forgot that the ids had one).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshDataDir, freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { eventually } from '../chaos/load'

const FLAG = { key: 'pro-plan', filters: { groups: [{ properties: [{ key: 'plan', value: ['pro'], operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } }
const auth = { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json' }

let a: ServiceProcess
let b: ServiceProcess
beforeAll(async () => {
  const env = await freshEnv({ postgres: 'real', clickhouse: 'real' })
  a = await spawnService({ ...env, FLUSH_INTERVAL_MS: '20', LOG_LEVEL: 'warn' })
  b = await spawnService({ ...env, DATA_DIR: await freshDataDir('real'), FLUSH_INTERVAL_MS: '20', LOG_LEVEL: 'warn' })
})
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()])
})

const capture = async (p: ServiceProcess, body: Record<string, unknown>) => {
  expect((await fetch(`${p.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, ...body }) })).status).toBe(200)
}
const proPlan = async (p: ServiceProcess, distinctId: string) => {
  const r = await fetch(`${p.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: distinctId }) })
  return ((await r.json()) as { featureFlags: Record<string, unknown> }).featureFlags['pro-plan']
}
const personOf = async (p: ServiceProcess, distinctId: string) =>
  ((await (await fetch(`${p.url}/api/projects/1/persons/?distinct_id=${distinctId}`, { headers: auth })).json()) as { results: { id: string; properties: Record<string, unknown> }[] }).results[0]

describe('erasure across processes', () => {
  test('erased through one process: the other stops answering from its cache, and its next capture makes a new person', async () => {
    expect((await fetch(`${a.url}/api/projects/@current/feature_flags/`, { method: 'POST', headers: auth, body: JSON.stringify(FLAG) })).status).toBe(201)
    // learned through b: b's learner now knows the id has a person, and b's /decide caches it
    await capture(b, { event: '$identify', distinct_id: 'leaver', properties: { $set: { plan: 'pro' } } })
    expect(await eventually(async () => (await proPlan(b, 'leaver')) === true, 30_000, 50)).toBe(true)
    const person = await personOf(a, 'leaver')

    expect((await fetch(`${a.url}/api/projects/1/persons/${person.id}/?delete_events=true`, { method: 'DELETE', headers: auth })).status).toBe(202)
    const deadline = Date.now() + 1000
    let forgotten = false
    while (!forgotten && Date.now() < deadline) {
      forgotten = (await proPlan(b, 'leaver')) === false
      if (!forgotten) await Bun.sleep(20)
    }
    expect(forgotten).toBe(true)

    // a plain event through b (no $set, no $identify): b's learner must not take the id for known
    await capture(b, { event: 'pageview', distinct_id: 'leaver' })
    expect(await eventually(async () => (await personOf(a, 'leaver')) !== undefined, 30_000, 50)).toBe(true)
    expect((await personOf(b, 'leaver')).properties).toEqual({})
  })
})
