// A personless id's rows through identify and erasure (real Postgres, the learner and the mapping copy into the
// embedded event store's table): personless, then the identified person's, then nobody once the person is erased,
// then personless again when the id comes back, never outranked by an older row.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database as Sqlite } from 'bun:sqlite'
import { join } from 'node:path'
import { migratePostgres } from '../../src/db/migrate'
import { openDatabase, type Database } from '../../src/db/postgres'
import { DefinitionTracker } from '../../src/definitions/tracker'
import { EmbeddedEventStore } from '../../src/events/embedded'
import { silentLogger } from '../../src/log'
import { deletePerson } from '../../src/people/erasure-repository'
import { personUuid } from '../../src/people/identity'
import { Learner } from '../../src/people/learner'
import { MetricsRecorder } from '../../src/pipeline/metrics-relay'
import { createProject } from '../../src/projects/repository'
import { PersonMappingCopy, SqliteMappingSink } from '../../src/query/person-mapping'
import { sharedPostgres } from '../helpers/shared-servers'
import { tempDir } from '../helpers/temp'

describe('a personless id identified, erased, back', () => {
  let db: Database
  beforeAll(async () => {
    db = await openDatabase({ databaseUrl: await (await sharedPostgres()).createDatabase(), dataDir: tempDir('phog-personless-erasure-pg-'), poolMax: 2 })
    await migratePostgres(db.sql)
  })
  afterAll(async () => {
    await db?.close()
  })

  test('uuid of the id, the person\'s, nobody, the id\'s again', async () => {
    const teamId = (await createProject(db.sql, { name: 'Erasure', token: 'phc_personless_erase_00001' })).id
    const learner = new Learner({ sql: db.sql, tracker: new DefinitionTracker(), metrics: new MetricsRecorder(), log: silentLogger })
    let seq = 0
    const learn = async (event: string, distinctId: string, properties: Record<string, unknown>) => {
      seq++
      const record = { seq, projectId: teamId, receivedAt: Date.now(), events: [{ uuid: crypto.randomUUID(), event, distinctId, properties, timestamp: Date.now() }], dropped: new Map(), size: 0, decodedSize: 0 }
      await learner.handle({ records: [record], firstSeq: seq, lastSeq: seq, events: 1, items: 1, bytes: 0 })
    }
    const file = join(tempDir('phog-personless-erasure-'), 'events.sqlite')
    const store = new EmbeddedEventStore(file)
    await store.init()
    await store.close()
    const copy = new PersonMappingCopy(db.sql, new SqliteMappingSink(file), silentLogger)
    const mapped = async () => {
      await copy.pass()
      const events = new Sqlite(file, { readonly: true })
      const rows = events.query('SELECT distinct_id, person_id FROM person_distinct_id ORDER BY distinct_id').all()
      events.close()
      return rows
    }

    await learn('$pageview', 'anon', { $process_person_profile: false })
    expect(await mapped()).toEqual([{ distinct_id: 'anon', person_id: personUuid(teamId, 'anon') }])
    await learn('$identify', 'user', { $anon_distinct_id: 'anon' })
    const user = personUuid(teamId, 'user')
    expect(await mapped()).toEqual([{ distinct_id: 'anon', person_id: user }, { distinct_id: 'user', person_id: user }])
    // a personless event of an id that has a person changes nothing (even once the learner has forgotten it)
    learner.forget(teamId)
    await learn('$pageview', 'anon', { $process_person_profile: false })
    expect(await mapped()).toEqual([{ distinct_id: 'anon', person_id: user }, { distinct_id: 'user', person_id: user }])

    const erased = await deletePerson(db.sql, teamId, user)
    expect(erased?.sort()).toEqual(['anon', 'user'])
    learner.forget(teamId, erased!) // as the flush worker does when it hears of the erasure
    expect(await mapped()).toEqual([{ distinct_id: 'anon', person_id: null }, { distinct_id: 'user', person_id: null }])
    await learn('$pageview', 'anon', { $process_person_profile: false })
    expect(await mapped()).toEqual([{ distinct_id: 'anon', person_id: personUuid(teamId, 'anon') }, { distinct_id: 'user', person_id: null }])
    await copy.stop()
  })
})
