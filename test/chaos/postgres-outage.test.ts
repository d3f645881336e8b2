// Postgres stopped under load: capture keeps accepting cached project keys, unknown keys get 503
// fetch_team_fail, /decide answers what needs no stored data with errorComputingFlags; when Postgres
// returns, everything recovers without a restart (persons learned during the outage included).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { EmbeddedEventStore } from '../../src/events/embedded'
import { startPostgres, type PostgresServer } from '../helpers/postgres-server'
import { freshEnv, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { eventually, exactlyOnce, FULL, startLoad } from './load'

const OUTAGE_MS = FULL ? 30_000 : 4_000

let pg: PostgresServer
let service: ServiceProcess
let env: Record<string, string>
beforeAll(async () => {
  pg = await startPostgres()
  env = { ...(await freshEnv({ postgres: 'embedded', clickhouse: 'embedded' })), DATABASE_URL: await pg.createDatabase(), EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: '50', LOG_LEVEL: 'info' }
  service = await spawnService(env)
})
afterAll(async () => {
  await service?.stop()
  await pg?.destroy()
})

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${service.url}${path}`, { ...init, headers: { authorization: `Bearer ${PERSONAL_KEY}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } })

/** What the service says of itself when a check did not come true in time (CI shows only what failed). */
async function explain(what: string, ok: boolean): Promise<boolean> {
  if (!ok) {
    const ready = await fetch(`${service.url}/_ready`).then((r) => r.text(), (e) => String(e))
    console.error(`[postgres outage] ${what} did not happen in time; /_ready: ${ready}\nlogs:\n${service.logs().slice(-6000)}`)
  }
  return ok
}

async function decide(distinctId: string) {
  const r = await fetch(`${service.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ token: PROJECT_KEY, distinct_id: distinctId }) })
  return { status: r.status, body: (await r.json()) as Record<string, any> }
}

describe('Postgres outage under load', () => {
  test(`stopped for ${OUTAGE_MS / 1000} s: capture goes on, unknown keys 503, /decide degrades, all recovers`, async () => {
    // one flag that needs no stored data, one that needs the stored person
    for (const flag of [
      { key: 'everyone', filters: { groups: [{ properties: [], rollout_percentage: 100 }] } },
      { key: 'pros-only', filters: { groups: [{ properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'person' }], rollout_percentage: 100 }] } },
    ]) {
      expect((await api('/api/projects/1/feature_flags/', { method: 'POST', body: JSON.stringify(flag) })).status).toBe(201)
    }
    const capture = (body: unknown) => fetch(`${service.url}/capture/`, { method: 'POST', body: JSON.stringify(body) })
    await capture({ api_key: PROJECT_KEY, event: '$identify', distinct_id: 'pro-user', properties: { $set: { plan: 'pro' } } })
    expect(await eventually(async () => (await decide('pro-user')).body.featureFlags?.['pros-only'] === true, 15_000)).toBe(true)

    const load = startLoad(() => service.url, { concurrency: 4, batchSize: 20, retry: true })
    await Bun.sleep(500)
    await pg.stop()
    const outageEnds = Date.now() + OUTAGE_MS
    await Bun.sleep(300)

    // capture with the cached key goes on
    const during = await capture({ api_key: PROJECT_KEY, event: 'during outage', distinct_id: 'outage-user', properties: { $set: { seen: 'outage' } } })
    expect(during.status).toBe(200)
    // an unknown key cannot be checked: 503 fetch_team_fail, not 401
    const unknown = await capture({ api_key: 'phc_never_seen_before_key', event: 'x', distinct_id: 'y' })
    expect(unknown.status).toBe(503)
    expect(((await unknown.json()) as { code: string }).code).toBe('fetch_team_fail')
    // a person /decide read before the outage is answered from memory (nothing can change it meanwhile)
    const known = await decide('pro-user')
    expect(known.body.featureFlags['pros-only']).toBe(true)
    // for anyone else it answers what needs no stored data, and says some flags could not be computed
    const d = await decide('never-asked-before')
    expect(d.status).toBe(200)
    expect(d.body.featureFlags.everyone).toBe(true)
    expect('pros-only' in d.body.featureFlags).toBe(false)
    expect(d.body.errorComputingFlags).toBe(true)
    expect(d.body.errorsWhileComputingFlags).toBe(true)
    const ready = await fetch(`${service.url}/_ready`)
    expect(ready.status).toBe(503)

    await Bun.sleep(Math.max(0, outageEnds - Date.now()))
    await pg.start()
    await load.stop(Date.now() + 60_000)
    expect(load.statuses.get(200) ?? 0).toBeGreaterThan(0)
    if (load.acked.length !== load.sent.length) await explain(`every batch acknowledged (${load.acked.length} of ${load.sent.length}; statuses ${JSON.stringify([...load.statuses])})`, false)
    expect(load.acked.length).toBe(load.sent.length)

    // recovered without a restart
    expect(await explain('ready again', await eventually(async () => (await fetch(`${service.url}/_ready`)).status === 200, 20_000))).toBe(true)
    expect(await explain('flags computed again', await eventually(async () => (await decide('pro-user')).body.errorComputingFlags === false, 10_000))).toBe(true)
    expect((await decide('pro-user')).body.featureFlags['pros-only']).toBe(true)
    const retry = await capture({ api_key: 'phc_never_seen_before_key', event: 'x', distinct_id: 'y' })
    expect(retry.status).toBe(401)
    // what was captured during the outage was learned once Postgres was back
    const learned = await eventually(async () => {
      const r = await api('/api/projects/1/persons/?distinct_id=outage-user')
      return ((await r.json()) as { results: { properties: Record<string, unknown> }[] }).results[0]?.properties.seen === 'outage'
    }, 30_000)
    expect(await explain('the outage person learned', learned)).toBe(true)

    // every batch acknowledged before, during and after the outage is stored exactly once (the retried ones
    // were re-sent with the same uuids until acknowledged, as the SDKs do)
    const store = new EmbeddedEventStore(join(env.DATA_DIR, 'events.sqlite'))
    await store.init()
    try {
      const landed = await eventually(async () => (await store.countByUuid(1, load.acked)).size === load.acked.length, 60_000, 250)
      if (!landed) console.error(`not all acknowledged events landed; logs:\n${service.logs().slice(-6000)}`)
      expect(load.acked.length).toBeGreaterThan(0)
      expect(exactlyOnce(await store.countByUuid(1, load.sent), load.acked)).toEqual({ missing: 0, duplicated: 0 })
      // a store that is down is waited for, never mistaken for poison: nothing was dead-lettered
      expect(existsSync(join(env.DATA_DIR, 'dlq'))).toBe(false)
      const metrics = await (await fetch(`${service.url}/metrics`)).text()
      expect(metrics).not.toContain('pipeline_dead_lettered_events_total{')
    } finally {
      await store.close()
    }
  })
})
