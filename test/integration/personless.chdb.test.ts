// Personless visitors on the current ClickHouse engine (chDB 26.7, in-process; it has no server, so no stack): the
// events written through the event store, learned by the flush worker's learner against real Postgres, the mapping
// copied by the same PersonMappingCopy through the ClickHouse sink, and asked through the query and insights
// services and the persons listing, with the questions and answers of every other store.
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { createInsightsService } from '../../src/insights/kinds'
import { migratePostgres } from '../../src/db/migrate'
import { openDatabase } from '../../src/db/postgres'
import { DefinitionTracker } from '../../src/definitions/tracker'
import { silentLogger } from '../../src/log'
import { Learner } from '../../src/people/learner'
import { listPersons } from '../../src/people/repository'
import { MetricsRecorder } from '../../src/pipeline/metrics-relay'
import { createProject } from '../../src/projects/repository'
import { ClickHouseMappingSink, PersonMappingCopy } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { sharedPostgres } from '../helpers/shared-servers'
import { tempDir } from '../helpers/temp'
import { event } from './event-store.contract'
import { personlessContract, type PersonlessDriver } from './personless.contract'

describeWithChdb('personless visitors on chDB (ClickHouse 26.7)', () => {
  personlessContract('chDB (ClickHouse 26.7, real Postgres)', async (): Promise<PersonlessDriver> => {
    const db = await openDatabase({ databaseUrl: await (await sharedPostgres()).createDatabase(), dataDir: tempDir('phog-personless-pg-'), poolMax: 2 })
    await migratePostgres(db.sql)
    const teamId = (await createProject(db.sql, { name: 'Personless', token: 'phc_personless_chdb_000001' })).id
    const url = chdbUrl(`personless_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    const learner = new Learner({ sql: db.sql, tracker: new DefinitionTracker(), metrics: new MetricsRecorder(), log: silentLogger })
    const copy = new PersonMappingCopy(db.sql, new ClickHouseMappingSink(chdbClient(), store.database), silentLogger)
    const query = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const insights = createInsightsService(query, { cacheTtlMs: 0, cacheMaxBytes: 0 }, { funnels: { maxEvents: 1_000_000, timeoutMs: 30_000 } })
    const project = { id: teamId, timezone: 'UTC', weekStartDay: 0 }
    return {
      teamId,
      async capture(events) {
        const now = Date.now()
        const captured = events.map((e) => ({ uuid: crypto.randomUUID(), event: e.event, distinctId: e.distinctId, properties: e.properties, timestamp: Date.parse(e.timestamp) }))
        await store.insertBatch(captured.map((e) => event({ ...e, teamId, properties: JSON.stringify(e.properties), createdAt: now })), { inDoubt: false })
        const record = { seq: 1, projectId: teamId, receivedAt: now, events: captured, dropped: new Map(), size: 0, decodedSize: 0 }
        await learner.handle({ records: [record], firstSeq: 1, lastSeq: 1, events: captured.length, items: captured.length, bytes: 0 })
        await copy.pass()
      },
      hogql: async (text) => (await query.run(teamId, text)).results,
      insight: async (q) => (await insights.run(project, q)).results,
      async persons(distinctId) {
        const { count, rows } = await listPersons(db.sql, teamId, { distinctId, limit: 100, offset: 0 })
        return { count, results: rows.map((r) => ({ uuid: r.uuid, distinct_ids: r.distinct_ids })) }
      },
      async close() {
        await copy.stop()
        await store.close()
        await db.close()
      },
    }
  })
})
