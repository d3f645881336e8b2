// ProjectTokenCache against a real Postgres (a database of its own on the shared test server; a private
// server for the outage case). Every query the cache sends is counted through postgres.js's `debug` hook,
// so "hits the database at most once" is measured, not assumed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import postgres, { type Sql } from 'postgres'
import { migratePostgres } from '../db/migrate'
import { ApiError } from '../http/errors'
import { startPostgres, type PostgresServer } from '../../test/helpers/postgres-server'
import { sharedPostgres } from '../../test/helpers/shared-servers'
import { freePort } from '../../test/helpers/spawn-service'
import { createProject } from './repository'
import { ProjectTokenCache, type TokenCacheOptions } from './token-cache'

interface Counted {
  sql: Sql
  /** `select … from projects` queries sent so far (the cache's only query) */
  reloads(): number
}

/** A postgres.js client as the service makes one (bigint ids as numbers), counting the cache's reloads. */
function countedClient(url: string): Counted {
  let reloads = 0
  const sql = postgres(url, {
    max: 4,
    connect_timeout: 2,
    idle_timeout: 5,
    onnotice: () => undefined,
    types: { bigint: { to: 20, from: [20], serialize: (v: number) => String(v), parse: (v: string) => Number(v) } },
    debug: (_connection, query) => {
      if (/from projects/.test(query)) reloads++
    },
  } as postgres.Options<{}>)
  return { sql: sql as unknown as Sql, reloads: () => reloads }
}

/** Reads a private map's size: the bound on memory is the point of some tests below. */
function sizeOf(cache: ProjectTokenCache, field: 'negative' | 'slots' | 'byHash'): number {
  return (cache as unknown as Record<string, Map<string, unknown>>)[field].size
}

const badKey = (i: number | string) => `phc_not_a_real_project_key_${i}`

async function eventually(check: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return true
    await Bun.sleep(20)
  }
  return check()
}

describe('ProjectTokenCache on a reachable Postgres', () => {
  let url: string
  let admin: Counted
  const caches: ProjectTokenCache[] = []
  const clients: Counted[] = []
  let known: { id: number; api_token: string }

  beforeAll(async () => {
    url = await (await sharedPostgres()).createDatabase()
    admin = countedClient(url)
    await migratePostgres(admin.sql)
    known = await createProject(admin.sql, { name: 'token cache test' })
  })
  afterAll(async () => {
    for (const c of caches) c.stop()
    await Promise.all([admin, ...clients].map((c) => (c.sql as unknown as { end(o: object): Promise<void> }).end({ timeout: 1 })))
  })

  async function started(options: TokenCacheOptions = {}): Promise<{ cache: ProjectTokenCache; db: Counted }> {
    const db = countedClient(url)
    clients.push(db)
    const cache = new ProjectTokenCache(db.sql, options)
    caches.push(cache)
    await cache.start()
    return { cache, db }
  }

  test('start() loads every project once; known keys then resolve from memory without another query', async () => {
    const { cache, db } = await started()
    expect(db.reloads()).toBe(1)
    expect(cache.cached(known.api_token)).toBe(known.id)
    expect(await cache.lookup(known.api_token)).toBe(known.id)
    expect(await cache.resolve(known.api_token)).toBe(known.id)
    await Promise.all(Array.from({ length: 500 }, () => cache.lookup(known.api_token)))
    expect(db.reloads()).toBe(1)
  })

  test('a key no project has is unknown, resolve() throws 401 invalid_api_key, and cached() says nothing', async () => {
    const { cache } = await started()
    expect(cache.cached(badKey('unknown'))).toBeUndefined()
    expect(await cache.lookup(badKey('unknown'))).toBe('unknown')
    const error = await cache.resolve(badKey('unknown')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(401)
    expect((error as ApiError).code).toBe('invalid_api_key')
  })

  test('a repeated bad key hits the database at most once (negative cache), even when every miss may reload', async () => {
    const { cache, db } = await started({ missReloadIntervalMs: 0, negativeTtlMs: 60_000 })
    const before = db.reloads()
    for (let i = 0; i < 200; i++) expect(await cache.lookup(badKey('repeated'))).toBe('unknown')
    expect(db.reloads() - before).toBe(1)
    // distinct bad keys: at most one reload per key, never more
    for (let i = 0; i < 50; i++) {
      await cache.lookup(badKey(`distinct-${i}`))
      await cache.lookup(badKey(`distinct-${i}`))
    }
    expect(db.reloads() - before).toBeLessThanOrEqual(1 + 50)
  })

  test('a concurrent flood of distinct bad keys shares one reload at a time', async () => {
    const { cache, db } = await started({ missReloadIntervalMs: 0, negativeTtlMs: 60_000 })
    const before = db.reloads()
    const answers = await Promise.all(Array.from({ length: 1000 }, (_, i) => cache.lookup(badKey(`flood-${i}`))))
    expect(answers.every((a) => a === 'unknown')).toBe(true)
    // the first miss starts a reload; every other miss in flight waits for that one instead of starting its own
    expect(db.reloads() - before).toBeLessThanOrEqual(2)
  })

  test('a sustained flood of fresh bad keys costs about one query per miss interval', async () => {
    const { cache, db } = await started({ missReloadIntervalMs: 200 })
    const before = db.reloads()
    const startedAt = Date.now()
    let n = 0
    while (Date.now() - startedAt < 1_000) {
      await Promise.all(Array.from({ length: 50 }, () => cache.lookup(badKey(`sustained-${n++}`))))
    }
    const elapsed = Date.now() - startedAt
    expect(n).toBeGreaterThan(500)
    expect(db.reloads() - before).toBeLessThanOrEqual(Math.ceil(elapsed / 200) + 1)
  })

  test('the negative cache and the key-hash memo stay within negativeMax; the oldest misses are forgotten first', async () => {
    const { cache, db } = await started({ missReloadIntervalMs: 0, negativeTtlMs: 60_000, negativeMax: 10 })
    for (let i = 0; i < 1000; i++) await cache.lookup(badKey(`bounded-${i}`))
    expect(sizeOf(cache, 'negative')).toBeLessThanOrEqual(10)
    expect(sizeOf(cache, 'slots')).toBeLessThanOrEqual(10)
    // the newest miss is still remembered (no query), the first one was evicted (a query again)
    const before = db.reloads()
    expect(await cache.lookup(badKey('bounded-999'))).toBe('unknown')
    expect(db.reloads()).toBe(before)
    expect(await cache.lookup(badKey('bounded-0'))).toBe('unknown')
    expect(db.reloads()).toBe(before + 1)
    // known keys are never evicted by the flood
    expect(await cache.lookup(known.api_token)).toBe(known.id)
  })

  test('a project created elsewhere after the snapshot is found on the first miss', async () => {
    const { cache } = await started({ missReloadIntervalMs: 0 })
    const later = await createProject(admin.sql, { name: 'created after start' })
    expect(cache.cached(later.api_token)).toBeUndefined()
    expect(await cache.lookup(later.api_token)).toBe(later.id)
    expect(cache.cached(later.api_token)).toBe(later.id)
  })

  test('a remembered miss stays unknown until its TTL ends, then a reload finds the new project', async () => {
    const { cache } = await started({ missReloadIntervalMs: 0, negativeTtlMs: 300 })
    const token = `phc_created_after_a_miss_${crypto.randomUUID().replace(/-/g, '')}`
    expect(await cache.lookup(token)).toBe('unknown')
    const created = await createProject(admin.sql, { name: 'after a miss', token })
    expect(await cache.lookup(token)).toBe('unknown') // negative-cached: no reload within the TTL
    await Bun.sleep(350)
    expect(await cache.lookup(token)).toBe(created.id)
  })

  test('add() makes a key known at once and clears its negative entry', async () => {
    const { cache, db } = await started({ missReloadIntervalMs: 0, negativeTtlMs: 60_000 })
    const token = badKey('added')
    expect(await cache.lookup(token)).toBe('unknown')
    const before = db.reloads()
    cache.add(token, 4242)
    expect(cache.cached(token)).toBe(4242)
    expect(await cache.lookup(token)).toBe(4242)
    expect(db.reloads()).toBe(before)
  })

  test('the periodic refresh picks up new projects and drops deleted ones without any lookup', async () => {
    const { cache, db } = await started({ reloadEveryMs: 50 })
    const fresh = await createProject(admin.sql, { name: 'seen by the refresh' })
    expect(await eventually(() => cache.cached(fresh.api_token) === fresh.id, 5_000)).toBe(true)
    await admin.sql`delete from projects where id = ${fresh.id}`
    expect(await eventually(() => cache.cached(fresh.api_token) === undefined, 5_000)).toBe(true)
    expect(db.reloads()).toBeGreaterThan(2)
    // stop() ends the refreshing
    cache.stop()
    await Bun.sleep(60)
    const stoppedAt = db.reloads()
    await Bun.sleep(300)
    expect(db.reloads()).toBe(stoppedAt)
  })
})

describe('ProjectTokenCache when Postgres is unreachable', () => {
  let pg: PostgresServer
  let db: Counted
  let cache: ProjectTokenCache
  let known: { id: number; api_token: string }

  beforeAll(async () => {
    pg = await startPostgres()
    db = countedClient(await pg.createDatabase())
    await migratePostgres(db.sql)
    known = await createProject(db.sql, { name: 'outage test' })
    cache = new ProjectTokenCache(db.sql, { missReloadIntervalMs: 0 })
    await cache.start()
  })
  afterAll(async () => {
    cache?.stop()
    await (db?.sql as unknown as { end(o: object): Promise<void> } | undefined)?.end({ timeout: 1 })
    await pg?.destroy()
  })

  test('known keys keep resolving from the snapshot; unknown keys are unavailable → 503 fetch_team_fail; all recovers', async () => {
    expect(await cache.lookup(badKey('before-outage'))).toBe('unknown')
    await pg.stop()

    expect(cache.cached(known.api_token)).toBe(known.id)
    expect(await cache.lookup(known.api_token)).toBe(known.id)
    expect(await cache.resolve(known.api_token)).toBe(known.id)

    expect(await cache.lookup(badKey('during-outage'))).toBe('unavailable')
    const error = await cache.resolve(badKey('during-outage')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect((error as ApiError).status).toBe(503)
    expect((error as ApiError).code).toBe('fetch_team_fail')
    expect((error as ApiError).headers['retry-after']).toBe('1')
    // a miss remembered before the outage cannot be trusted either once a reload has failed
    expect(await cache.lookup(badKey('before-outage'))).toBe('unavailable')

    await pg.start()
    expect(await eventually(async () => (await cache.lookup(badKey('during-outage'))) === 'unknown', 15_000)).toBe(true)
    const after = await cache.resolve(badKey('during-outage')).catch((e: unknown) => e)
    expect((after as ApiError).status).toBe(401)
    expect(await cache.lookup(known.api_token)).toBe(known.id)
  })

  test('a cache started while Postgres is down answers unavailable, not unknown', async () => {
    // a port nothing listens on: the first load fails with ECONNREFUSED
    const dead = countedClient(`postgres://postgres@127.0.0.1:${await freePort()}/postgres`)
    const cold = new ProjectTokenCache(dead.sql)
    try {
      await cold.start()
      expect(cold.cached(known.api_token)).toBeUndefined()
      expect(await cold.lookup(known.api_token)).toBe('unavailable')
      expect(((await cold.resolve(badKey('cold')).catch((e: unknown) => e)) as ApiError).code).toBe('fetch_team_fail')
    } finally {
      cold.stop()
      await (dead.sql as unknown as { end(o: object): Promise<void> }).end({ timeout: 1 })
    }
  })
})

describe('ProjectTokenCache and keys longer than any real one', () => {
  let pg: Counted
  let cache: ProjectTokenCache
  beforeAll(async () => {
    pg = countedClient(await (await sharedPostgres()).createDatabase())
    await migratePostgres(pg.sql)
    cache = new ProjectTokenCache(pg.sql, { missReloadIntervalMs: 0 })
    await cache.start()
  })
  afterAll(async () => {
    cache?.stop()
    await (pg?.sql as unknown as { end(o: object): Promise<void> } | undefined)?.end({ timeout: 1 })
  })

  test('are answered unknown with no query and nothing remembered, however many', async () => {
    const before = pg.reloads()
    for (let i = 0; i < 100; i++) expect(await cache.lookup(`phc_${i}_${'x'.repeat(100_000)}`)).toBe('unknown')
    expect(pg.reloads()).toBe(before)
    expect(sizeOf(cache, 'slots')).toBe(0)
    expect(sizeOf(cache, 'negative')).toBe(0)
  })

  test('invalidate() drops a reset token at once', async () => {
    const project = await createProject(pg.sql, { name: 'reset' })
    expect(await cache.lookup(project.api_token)).toBe(project.id)
    await pg.sql`update projects set api_token_hash = 'sha256$reset', api_token = null where id = ${project.id}`
    expect(cache.cached(project.api_token)).toBe(project.id) // the snapshot still holds it until told
    await cache.invalidate()
    expect(cache.cached(project.api_token)).toBeUndefined()
  })
})
