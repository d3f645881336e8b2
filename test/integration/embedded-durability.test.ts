// The embedded metadata store (PGlite) keeps what it acknowledged: a flag and a personal key written through the API
// survive a SIGKILL sent the moment they are answered, and Postgres runs with fsync on, syncing its write-ahead log
// with fsync(2) (which pglite-durable-fs.ts makes reach the disk), so an OS crash does not lose them either.
import { afterAll, describe, expect, test } from 'bun:test'
import { openDatabase } from '../../src/db/postgres'
import { freshDataDir, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { tempDir } from '../helpers/temp'

describe('the embedded metadata store', () => {
  const services: ServiceProcess[] = []
  afterAll(async () => {
    for (const s of services) await s.kill()
  })

  test('runs Postgres with fsync on and the WAL synced by fsync(2); a new cluster too', async () => {
    for (const dataDir of [tempDir('phog-fsync-'), await freshDataDir('embedded')]) {
      const db = await openDatabase({ dataDir, poolMax: 1 })
      try {
        const [{ fsync }] = await db.sql`SHOW fsync`
        const [{ wal_sync_method }] = await db.sql`SHOW wal_sync_method`
        expect({ fsync, wal_sync_method }).toEqual({ fsync: 'on', wal_sync_method: 'fsync' })
      } finally {
        await db.close()
      }
    }
  })

  test('a flag and a key written the moment before a SIGKILL are there after the restart', async () => {
    const env = { DATA_DIR: await freshDataDir('embedded'), INIT_PROJECT_API_KEY: PROJECT_KEY, INIT_PERSONAL_API_KEY: PERSONAL_KEY, LOG_LEVEL: 'warn' }
    const first = await spawnService(env)
    services.push(first)
    const api = (service: ServiceProcess, path: string, init: { method?: string; json?: unknown; key?: string } = {}) =>
      fetch(`${service.url}${path}`, {
        method: init.method ?? 'GET',
        headers: { authorization: `Bearer ${init.key ?? PERSONAL_KEY}`, 'content-type': 'application/json' },
        body: init.json === undefined ? undefined : JSON.stringify(init.json),
      })
    const [flagAnswer, keyAnswer] = await Promise.all([
      api(first, '/api/projects/@current/feature_flags/', { method: 'POST', json: { key: 'survives-sigkill', filters: { groups: [{ rollout_percentage: 100 }] } } }),
      api(first, '/api/personal_api_keys/', { method: 'POST', json: { label: 'survives sigkill', scopes: ['*'] } }),
    ])
    // killed at once: no drain, no checkpoint, no close
    process.kill(first.pid, 'SIGKILL')
    expect(flagAnswer.status).toBe(201)
    expect(keyAnswer.status).toBe(201)
    const flag = (await flagAnswer.json()) as { id: number }
    const key = (await keyAnswer.json()) as { value: string }
    await first.exited

    const second = await spawnService(env)
    services.push(second)
    const stored = await api(second, `/api/projects/@current/feature_flags/${flag.id}/`)
    expect(stored.status).toBe(200)
    expect(await stored.json()).toMatchObject({ key: 'survives-sigkill', active: true })
    // the new key authenticates
    const asNewKey = await api(second, '/api/projects/@current/', { key: key.value })
    expect(asNewKey.status).toBe(200)
    // and the flag answers /decide
    const decide = await fetch(`${second.url}/decide/?v=3`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, distinct_id: 'someone' }) })
    expect(((await decide.json()) as { featureFlags: Record<string, unknown> }).featureFlags['survives-sigkill']).toBe(true)
  })
})
