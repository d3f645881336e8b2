// The distinct id → person mapping copied from Postgres to where the events are (src/query/person-mapping.ts):
// the backfill of an install that held persons before the versions existed, merges re-pointing ids with higher
// versions, and projects copied independently. Real Postgres and the embedded event store.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database as Sqlite } from 'bun:sqlite'
import { cpSync, mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { EmbeddedEventStore } from '../../src/events/embedded'
import { migratePostgres, POSTGRES_MIGRATIONS_DIR } from '../../src/db/migrate'
import { openDatabase, type Database } from '../../src/db/postgres'
import { silentLogger } from '../../src/log'
import { createProject } from '../../src/projects/repository'
import { PersonMappingCopy, SqliteMappingSink } from '../../src/query/person-mapping'
import { sharedPostgres } from '../helpers/shared-servers'
import { tempDir } from '../helpers/temp'

describe('person mapping copy', () => {
  let db: Database
  let file: string
  let teams: number[]
  beforeAll(async () => {
    db = await openDatabase({ databaseUrl: await (await sharedPostgres()).createDatabase(), dataDir: tempDir('phog-mapping-pg-'), poolMax: 2 })
    // an install from before the versions: migrated up to 0006, holding persons
    const old = tempDir('phog-old-migrations-')
    mkdirSync(old, { recursive: true })
    for (const f of readdirSync(POSTGRES_MIGRATIONS_DIR).filter((f) => !f.includes('person_mapping_versions'))) cpSync(join(POSTGRES_MIGRATIONS_DIR, f), join(old, f))
    await migratePostgres(db.sql, old)
    teams = [(await createProject(db.sql, { name: 'A', token: 'phc_mapping_a_0000000001' })).id, (await createProject(db.sql, { name: 'B', token: 'phc_mapping_b_0000000001' })).id]
    for (const team of teams) {
      const [p1] = await db.sql<{ id: number }[]>`insert into persons (uuid, team_id) values (gen_random_uuid(), ${team}) returning id`
      const [p2] = await db.sql<{ id: number }[]>`insert into persons (uuid, team_id) values (gen_random_uuid(), ${team}) returning id`
      await db.sql`insert into person_distinct_ids (team_id, distinct_id, person_id) values (${team}, 'anon', ${p1.id}), (${team}, 'user', ${p2.id})`
    }
    await migratePostgres(db.sql) // 0007: every existing row gets a version
    file = join(tempDir('phog-mapping-'), 'events.sqlite')
    const store = new EmbeddedEventStore(file)
    await store.init()
    await store.close()
  })
  afterAll(async () => {
    await db?.close()
  })

  const copied = () => new Sqlite(file, { readonly: true }).query('SELECT team_id, distinct_id, person_id, version FROM person_distinct_id ORDER BY team_id, distinct_id').all() as { team_id: number; distinct_id: string; person_id: string | null; version: number }[]
  const inPostgres = async () => db.sql<{ team_id: number; distinct_id: string; uuid: string }[]>`
    select d.team_id, d.distinct_id, p.uuid::text as uuid from person_distinct_ids d join persons p on p.id = d.person_id order by d.team_id, d.distinct_id`

  test('the first copy is the backfill; a merge re-points with a higher version; an unchanged mapping copies nothing', async () => {
    const copy = new PersonMappingCopy(db.sql, new SqliteMappingSink(file), silentLogger)
    expect(await copy.pass()).toBe(4)
    expect(copied().map((r) => [r.team_id, r.distinct_id, r.person_id])).toEqual((await inPostgres()).map((r) => [r.team_id, r.distinct_id, r.uuid]))
    expect(await copy.pass()).toBe(0)
    const before = copied().find((r) => r.team_id === teams[0] && r.distinct_id === 'anon')!
    // as the learner merges: anon joins user's person
    await db.sql`update person_distinct_ids set person_id = (select person_id from person_distinct_ids where team_id = ${teams[0]} and distinct_id = 'user') where team_id = ${teams[0]} and distinct_id = 'anon'`
    expect(await copy.pass()).toBe(1)
    const after = copied().filter((r) => r.team_id === teams[0])
    expect(after[0].person_id).toBe(after[1].person_id)
    expect(after[0].version).toBeGreaterThan(before.version)
    // the other project is untouched
    expect(new Set(copied().filter((r) => r.team_id === teams[1]).map((r) => r.person_id)).size).toBe(2)
    // an erased person's ids belong to nobody (a tombstone with a higher version)
    await db.sql`delete from persons where team_id = ${teams[1]} and id = (select person_id from person_distinct_ids where team_id = ${teams[1]} and distinct_id = 'user')`
    expect(await copy.pass()).toBe(1)
    const erased = copied().find((r) => r.team_id === teams[1] && r.distinct_id === 'user')!
    expect(erased.person_id).toBeNull()
    expect(copied().find((r) => r.team_id === teams[1] && r.distinct_id === 'anon')!.person_id).not.toBeNull()
    await copy.stop()
    // a new copier (a restart) starts from what the store holds
    const again = new PersonMappingCopy(db.sql, new SqliteMappingSink(file), silentLogger)
    expect(await again.pass()).toBe(0)
    await again.stop()
  })
})
