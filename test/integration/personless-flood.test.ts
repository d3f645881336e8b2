// A flood of personless distinct ids (50,000 anonymous visitors, each seen once): every one is counted as a person,
// none is listed as one, and the memory that follows distinct ids stays within its bound. The learner's memory of
// known ids is the only state that grows with distinct ids (a batch's work is one bulk statement; the copy of the
// mapping reads pages of 5,000 rows), so it is watched directly on a learner of its own with a small bound; the
// service end to end takes the same flood on the embedded DuckDB store.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database as Sqlite } from 'bun:sqlite'
import { join } from 'node:path'
import { migratePostgres } from '../../src/db/migrate'
import { openDatabase, type Database } from '../../src/db/postgres'
import { DefinitionTracker } from '../../src/definitions/tracker'
import { EmbeddedEventStore } from '../../src/events/embedded'
import { silentLogger } from '../../src/log'
import { personUuid } from '../../src/people/identity'
import { Learner } from '../../src/people/learner'
import { MetricsRecorder } from '../../src/pipeline/metrics-relay'
import type { LoggedRecord } from '../../src/pipeline/ring'
import { createProject } from '../../src/projects/repository'
import { PersonMappingCopy, SqliteMappingSink } from '../../src/query/person-mapping'
import { sharedPostgres } from '../helpers/shared-servers'
import { BASE, json, learned, PROJECT_KEY, startStack, type Stack } from '../helpers/stack'
import { tempDir } from '../helpers/temp'

const VISITORS = 50_000
const PER_BATCH = 2_000
const DAY = Date.UTC(2024, 4, 6)
const visitor = (i: number) => `anon-${i.toString(36).padStart(4, '0')}-${crypto.randomUUID()}`

describe('a flood of personless distinct ids: the learner', () => {
  let db: Database
  let teamId: number
  beforeAll(async () => {
    db = await openDatabase({ databaseUrl: await (await sharedPostgres()).createDatabase(), dataDir: tempDir('phog-flood-pg-'), poolMax: 2 })
    await migratePostgres(db.sql)
    teamId = (await createProject(db.sql, { name: 'Flood', token: 'phc_personless_flood_00001' })).id
  })
  afterAll(async () => {
    await db?.close()
  })

  test('50,000 new ids in batches: every one recorded once, the memory of known ids within 1 MiB, the copy in pages', async () => {
    const bound = 1024 * 1024
    const metrics = new MetricsRecorder()
    const learner = new Learner({ sql: db.sql, tracker: new DefinitionTracker(), metrics, log: silentLogger, knownMaxBytes: bound })
    const ids = Array.from({ length: VISITORS }, (_, i) => visitor(i))
    const batchOf = (slice: string[], seq: number) => {
      const record: LoggedRecord = {
        seq,
        projectId: teamId,
        receivedAt: DAY,
        events: slice.map((id, i) => ({ uuid: crypto.randomUUID(), event: '$pageview', distinctId: id, properties: { $process_person_profile: false }, timestamp: DAY + i })),
        dropped: new Map(),
        size: 0,
        decodedSize: 0,
      }
      return { records: [record], firstSeq: seq, lastSeq: seq, events: slice.length, items: slice.length, bytes: 0 }
    }
    let slowest = 0
    let largest = 0
    for (let i = 0; i < VISITORS; i += PER_BATCH) {
      const started = performance.now()
      await learner.handle(batchOf(ids.slice(i, i + PER_BATCH), i / PER_BATCH + 1))
      slowest = Math.max(slowest, performance.now() - started)
      largest = Math.max(largest, learner.knownIds().bytes)
    }
    console.log(`${VISITORS} personless ids in batches of ${PER_BATCH}: slowest batch ${slowest.toFixed(0)} ms; memory of known ids at most ${largest} bytes (${learner.knownIds().entries} ids kept)`)
    expect(largest).toBeLessThanOrEqual(bound)
    expect(learner.knownIds().entries).toBeLessThan(VISITORS)
    const [{ rows, persons }] = await db.sql<{ rows: number; persons: number }[]>`
      select (select count(*)::int from personless_distinct_ids where team_id = ${teamId}) as rows,
             (select count(*)::int from persons where team_id = ${teamId}) as persons`
    expect({ rows, persons }).toEqual({ rows: VISITORS, persons: 0 })
    // the batches again (a replay after a crash, or the same visitors back once forgotten): nothing new is written
    const [{ top }] = await db.sql<{ top: string }[]>`select max(version)::text as top from personless_distinct_ids where team_id = ${teamId}`
    await learner.handle(batchOf(ids.slice(0, PER_BATCH), 1000))
    await learner.handle(batchOf(ids.slice(-PER_BATCH), 1001))
    const [again] = await db.sql<{ rows: number; top: string }[]>`select count(*)::int as rows, max(version)::text as top from personless_distinct_ids where team_id = ${teamId}`
    expect(again).toEqual({ rows: VISITORS, top })

    // copied where the events are as PostHog's deterministic uuids, 5,000 rows a statement
    const file = join(tempDir('phog-flood-events-'), 'events.sqlite')
    const store = new EmbeddedEventStore(file)
    await store.init()
    await store.close()
    const copy = new PersonMappingCopy(db.sql, new SqliteMappingSink(file), silentLogger)
    expect(await copy.pass()).toBe(VISITORS)
    await copy.stop()
    const copied = new Sqlite(file, { readonly: true })
    expect(copied.query('SELECT count(*) AS n, count(DISTINCT person_id) AS persons FROM person_distinct_id').get()).toEqual({ n: VISITORS, persons: VISITORS })
    for (const id of [ids[0], ids[VISITORS / 2], ids[VISITORS - 1]]) {
      expect(copied.query('SELECT person_id FROM person_distinct_id WHERE distinct_id = ?').get(id)).toEqual({ person_id: personUuid(teamId, id) })
    }
    copied.close()
  }, 300_000)
})

describe('a flood of personless distinct ids: the service on the embedded DuckDB store', () => {
  let stack: Stack
  const hogql = async (query: string) => {
    const r = await stack.api('/api/projects/1/query/', { method: 'POST', json: { query: { kind: 'HogQLQuery', query } } })
    const body = await json(r)
    if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(body)}`)
    return body.results as unknown[][]
  }
  beforeAll(async () => {
    stack = await startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' })
  })
  afterAll(() => stack?.close())

  test('50,000 anonymous visitors: 50,000 unique users, as many persons as distinct ids, none listed', async () => {
    const started = performance.now()
    for (let i = 0; i < VISITORS; i += 5_000) {
      const batch = Array.from({ length: 5_000 }, (_, k) => ({
        event: '$pageview',
        timestamp: new Date(DAY + (i + k) * 1000).toISOString(),
        properties: { distinct_id: visitor(i + k), $process_person_profile: false },
      }))
      const r = await stack.app.handle(new Request(`${BASE}/batch/`, { method: 'POST', body: JSON.stringify({ api_key: PROJECT_KEY, batch }) }))
      expect(r.status).toBe(200)
    }
    const captured = performance.now()
    await learned(stack, 120_000)
    const learnt = performance.now()
    let answer: unknown[][] = []
    for (let i = 0; i < 600; i++) {
      answer = await hogql('SELECT count(), count(DISTINCT person_id), count(DISTINCT distinct_id), sum(if(person_id IS NULL, 1, 0)) FROM events')
      if (answer[0][1] === VISITORS) break
      await Bun.sleep(100)
    }
    console.log(`captured in ${(captured - started).toFixed(0)} ms; stored and learned ${(learnt - captured).toFixed(0)} ms later, mapped ${(performance.now() - learnt).toFixed(0)} ms after that`)
    expect(answer).toEqual([[VISITORS, VISITORS, VISITORS, 0]])
    const trends = await stack.api('/api/projects/1/query/', {
      method: 'POST',
      json: { query: { kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: '$pageview', math: 'dau' }], dateRange: { date_from: '2024-05-06', date_to: '2024-05-06' } } },
    })
    // (one a second from midnight: all on the 6th)
    expect((await json(trends)).results[0].data).toEqual([VISITORS])
    const persons = await json(stack.api('/api/projects/1/persons/'))
    expect(persons.results).toEqual([])
  }, 300_000)
})
