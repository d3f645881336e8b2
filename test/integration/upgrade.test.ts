// Upgrades: a DATA_DIR written by the last landed release (test/fixtures/upgrade-64edb53.tar.xz, made by
// test/fixtures/make-upgrade-fixture.ts running that release) opens with this code: its migrations run, and every
// event, the person, the flag (answered by /decide), the cohort, the keys and the dashboard are there and work. A
// DATA_DIR whose stores were migrated by a newer release is refused at start, with a message that says so.
import { afterAll, describe, expect, test } from 'bun:test'
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/postgres'
import { UPGRADE_FIXTURE as F } from '../fixtures/upgrade-fixture-contents'
import { ROOT, spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { tempDir } from '../helpers/temp'

const services: ServiceProcess[] = []
afterAll(async () => {
  for (const s of services) await s.kill().catch(() => undefined)
})

function unpackFixture(): string {
  const dir = tempDir('phog-upgrade-')
  execFileSync('tar', ['-xJf', join(ROOT, `test/fixtures/upgrade-${F.release}.tar.xz`), '-C', dir])
  return dir
}

const api = async (url: string, path: string, key: string = F.personalKey) => {
  const r = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } })
  return { status: r.status, body: (await r.json()) as any }
}

/** Start a service on dataDir expecting it to refuse: its last log lines. */
async function refusedStart(dataDir: string): Promise<string> {
  try {
    const s = await spawnService({ DATA_DIR: dataDir, LOG_LEVEL: 'info' }, { waitMs: 60_000 })
    services.push(s)
    return 'started'
  } catch (error) {
    return (error as Error).message
  }
}

describe(`a DATA_DIR written by release ${F.release}`, () => {
  test('opens with this release: migrations run, every event, the person, flag, cohort, keys and dashboard work', async () => {
    const dataDir = unpackFixture()
    const made = JSON.parse(readFileSync(join(dataDir, 'fixture.json'), 'utf8')) as { flag: number; cohort: number; key: string; insight: number; dashboard: number }
    const service = await spawnService({ DATA_DIR: dataDir, LOG_LEVEL: 'info' })
    services.push(service)
    // this release's metadata migrations were applied to the old store (0019 and later came after it)
    expect(service.logs()).toContain('postgres migrations applied')

    const events = await api(service.url, '/api/projects/@current/events/?limit=100')
    expect(events.status).toBe(200)
    const uuids = (events.body.results as { uuid: string }[]).map((e) => e.uuid).sort()
    expect(uuids).toEqual(F.events.map((e) => e.uuid).sort())

    const person = await api(service.url, `/api/projects/@current/persons/?distinct_id=${encodeURIComponent(F.identifiedId)}`)
    expect(person.body.results).toHaveLength(1)
    expect([...person.body.results[0].distinct_ids].sort()).toEqual([F.anonymousId, F.identifiedId].sort())
    expect(person.body.results[0].properties.plan).toBe('pro')

    const flag = await api(service.url, `/api/projects/@current/feature_flags/${made.flag}/`)
    expect(flag.body.key).toBe(F.flagKey)
    const decide = async (distinctId: string) => {
      const r = await fetch(`${service.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: F.projectKey, distinct_id: distinctId }) })
      return ((await r.json()) as { featureFlags: Record<string, unknown> }).featureFlags[F.flagKey]
    }
    // the person's property, learned by the old release, answers the flag, under either of the person's ids
    expect(await decide(F.anonymousId)).toBe(true)
    expect(await decide(F.identifiedId)).toBe(true)
    expect(await decide('fixture-visitor-1')).toBe(false)

    const cohort = await api(service.url, `/api/projects/@current/cohorts/${made.cohort}/`)
    expect(cohort.body.name).toBe(F.cohortName)
    // both keys: the one made at boot by INIT_PERSONAL_API_KEY and the one made through the API
    expect((await api(service.url, '/api/projects/@current/', F.personalKey)).status).toBe(200)
    expect((await api(service.url, '/api/projects/@current/', made.key)).status).toBe(200)
    const dashboard = await api(service.url, `/api/projects/@current/dashboards/${made.dashboard}/`)
    expect(dashboard.body.name).toBe(F.dashboardName)
    expect(JSON.stringify(dashboard.body.tiles)).toContain(F.insightName)

    // and it takes new events as before
    const captured = await fetch(`${service.url}/capture/`, { method: 'POST', body: JSON.stringify({ api_key: F.projectKey, event: 'after_upgrade', distinct_id: F.identifiedId }) })
    expect(captured.status).toBe(200)
    expect(await service.stop()).toBe(0)
  }, 180_000)
})

describe('a DATA_DIR migrated by a newer release', () => {
  test('is refused at start, naming the store and the migration this release does not know', async () => {
    const dataDir = unpackFixture()
    // the metadata store: a migration from the future, as a newer release would have recorded it
    const db = await openDatabase({ dataDir, poolMax: 1 })
    try {
      await db.sql`insert into schema_migrations (version) values ('9999_from_a_newer_release')`
    } finally {
      await db.close()
    }
    const refusal = await refusedStart(dataDir)
    expect(refusal).toContain('could not start: the metadata store (Postgres) was migrated by a newer phog')
    expect(refusal).toContain('9999_from_a_newer_release')
    expect(refusal).toContain('docs/operations.md#upgrades')

    // the event store alike (DuckDB, the fixture's)
    const second = unpackFixture()
    const { DuckDBInstance } = await import('@duckdb/node-api')
    const instance = await DuckDBInstance.create(join(second, 'events.duckdb'))
    const c = await instance.connect()
    await c.run("INSERT INTO schema_migrations VALUES ('9999_from_a_newer_release', 0)")
    c.closeSync()
    instance.closeSync()
    const eventStoreRefusal = await refusedStart(second)
    expect(eventStoreRefusal).toContain('the embedded event store (DuckDB) was migrated by a newer phog')
    expect(eventStoreRefusal).toContain('9999_from_a_newer_release')
  }, 180_000)
})
