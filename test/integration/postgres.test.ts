// Migrations, bootstrap and keys at rest, on real Postgres and on the embedded PGlite.
import { afterAll, describe, expect, test } from 'bun:test'
import postgres from 'postgres'
import { migratePostgres, readMigrations, POSTGRES_MIGRATIONS_DIR } from '../../src/db/migrate'
import { inTransaction, openDatabase, type Database } from '../../src/db/postgres'
import { hashKey } from '../../src/projects/keys'
import { bootstrap, createPersonalKey, createProject } from '../../src/projects/repository'
import { sharedPostgres } from '../helpers/shared-servers'
import { freshDataDir } from '../helpers/stack'

const all = readMigrations(POSTGRES_MIGRATIONS_DIR).map((m) => m.version)

async function realDatabase(): Promise<Database> {
  const url = await (await sharedPostgres()).createDatabase()
  return openDatabase({ databaseUrl: url, dataDir: '/nonexistent', poolMax: 4 })
}

describe('postgres migrations (real Postgres)', () => {
  test('apply in order once, and a second run applies nothing', async () => {
    const db = await realDatabase()
    try {
      expect(await migratePostgres(db.sql)).toEqual(all)
      expect(await migratePostgres(db.sql)).toEqual([])
      const recorded = await db.sql<{ version: string }[]>`select version from schema_migrations order by version`
      expect(recorded.map((r) => r.version)).toEqual(all)
    } finally {
      await db.close()
    }
  })

  test('are safe when several processes migrate at once', async () => {
    const url = await (await sharedPostgres()).createDatabase()
    // separate clients stand in for separate processes: separate sessions contending for the lock
    const clients = Array.from({ length: 4 }, () => postgres(url, { max: 1, onnotice: () => undefined }))
    try {
      const results = await Promise.all(clients.map((sql) => migratePostgres(sql)))
      expect(results.flat().sort()).toEqual([...all].sort())
      expect(results.filter((r) => r.length > 0)).toHaveLength(1)
    } finally {
      await Promise.all(clients.map((c) => c.end()))
    }
  })
})

describe('bootstrap (real Postgres)', () => {
  test('creates the organization, project 1 and admin once, however often it runs', async () => {
    const db = await realDatabase()
    try {
      await migratePostgres(db.sql)
      const keys = { projectKey: 'phc_bootstrap_project_key', personalKey: 'phx_bootstrap_personal_key' }
      await Promise.all([bootstrap(db.sql, keys), bootstrap(db.sql, keys)])
      await bootstrap(db.sql, keys)
      const [counts] = await db.sql`
        select (select count(*)::int from organizations) as orgs, (select count(*)::int from projects) as projects,
               (select count(*)::int from users) as users, (select count(*)::int from personal_api_keys) as keys`
      expect(counts).toEqual({ orgs: 1, projects: 1, users: 1, keys: 1 })
      const [project] = await db.sql`select id, name from projects`
      expect(project).toEqual({ id: 1, name: 'Default project' })
      const [member] = await db.sql`select level from organization_members`
      expect(member.level).toBe(15)
    } finally {
      await db.close()
    }
  })

  test('a later boot never re-creates a reset token or a revoked key (applied once, to a store with no organization)', async () => {
    const db = await realDatabase()
    try {
      await migratePostgres(db.sql)
      const keys = { projectKey: 'phc_bootstrap_project_key', personalKey: 'phx_bootstrap_personal_key' }
      expect(await bootstrap(db.sql, keys)).toBe(true)
      await db.sql`update projects set api_token = 'phc_rotated_token_0001', api_token_hash = ${hashKey('phc_rotated_token_0001')}`
      await db.sql`delete from personal_api_keys`
      expect(await bootstrap(db.sql, keys)).toBe(false)
      const [counts] = await db.sql`
        select (select count(*)::int from projects) as projects, (select count(*)::int from personal_api_keys) as keys`
      expect(counts).toEqual({ projects: 1, keys: 0 })
      const [found] = await db.sql`select id from projects where api_token_hash = ${hashKey(keys.projectKey)}`
      expect(found).toBeUndefined()
    } finally {
      await db.close()
    }
  })

  test('personal keys are stored only as hashes and masks; project tokens (public by design) in clear', async () => {
    const db = await realDatabase()
    try {
      await migratePostgres(db.sql)
      const project = await createProject(db.sql, { name: 'p' })
      const { key } = await createPersonalKey(db.sql, { label: 'ci' })
      const dump = JSON.stringify([
        await db.sql`select * from projects`,
        await db.sql`select * from personal_api_keys`,
        await db.sql`select * from users`,
      ])
      expect(dump).toContain(project.api_token)
      expect(dump).not.toContain(key)
      expect(dump).toContain(hashKey(key))
      expect(dump).toContain(hashKey(project.api_token))
    } finally {
      await db.close()
    }
  })
})

describe('embedded Postgres (PGlite over its socket)', () => {
  const open: Database[] = []
  afterAll(async () => {
    for (const db of open) await db.close().catch(() => undefined)
  })

  test('migrates, serves concurrent queries and transactions, and persists across reopen', async () => {
    const dataDir = await freshDataDir('real')
    let db = await openDatabase({ dataDir, poolMax: 4 })
    open.push(db)
    expect(await migratePostgres(db.sql)).toEqual(all)
    // Interleaved transactions and queries from several pooled connections must not mix their protocol streams.
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2
          ? db.sql.begin(async (tx) => {
              await createProject(inTransaction(tx), { name: `p${i}` })
              await tx`select pg_sleep(0.01)`
            })
          : db.sql`select count(*)::int as n from projects`,
      ),
    )
    const [{ n }] = await db.sql`select count(*)::int as n from projects`
    expect(n).toBe(6)
    await db.close()
    open.pop()
    db = await openDatabase({ dataDir, poolMax: 2 })
    open.push(db)
    expect(await migratePostgres(db.sql)).toEqual([])
    const [{ m }] = await db.sql`select count(*)::int as m from projects`
    expect(m).toBe(6)
  })

  test('one process owns the data directory; another joins through its socket', async () => {
    const dataDir = await freshDataDir('embedded')
    const owner = await openDatabase({ dataDir, poolMax: 2 })
    open.push(owner)
    await expect(openDatabase({ dataDir, poolMax: 2 })).rejects.toThrow(`in use by another live process (pid ${process.pid})`)
    // a joining client in another process finds the socket through the holder (see cli.test.ts, data-dir.test.ts)
  })
})
