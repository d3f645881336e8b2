// The lifecycle contract's events in a chDB database, for insights-lifecycle.chdb.test.ts and
// insights-stickiness.chdb.test.ts: stored through the event store and the person mapping sink, persons' creation
// times given as the learner would have written them (no Postgres here).
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { lifecycleRunner, type PersonCreation } from '../../src/insights/lifecycle'
import { InsightsService } from '../../src/insights/service'
import { runStickiness } from '../../src/insights/stickiness'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl } from '../helpers/chdb'
import { event } from './event-store.contract'
import { FIVE_YEAR_EVENTS, LIFECYCLE_EVENTS } from './insights-lifecycle.contract'

type Seeded = { event: string; timestamp: string; properties: Record<string, unknown> }

/** Person ids of the contract's distinct ids (anon-d and user-d one person; anon-e none), and a ghost's. */
const PERSON_OF: Record<string, string> = {
  frank: '00000000-0000-4000-8000-000000000001',
  bob: '00000000-0000-4000-8000-000000000002',
  carol: '00000000-0000-4000-8000-000000000003',
  alice: '00000000-0000-4000-8000-000000000004',
  'anon-d': '00000000-0000-4000-8000-000000000005',
  'user-d': '00000000-0000-4000-8000-000000000005',
  old: '00000000-0000-4000-8000-000000000006',
  recent: '00000000-0000-4000-8000-000000000007',
  // mapped, but its person has no row (as a personless visitor's deterministic id)
  ghost: '00000000-0000-4000-8000-000000000008',
}
export const CHDB_TEAMS = { newYork: 1, fiveYears: 3, ghost: 4 }

/**
 * A chDB database with the contract's events (New York: team 1, five years: team 3, the ghost: team 4) and their
 * person mapping; and when each person was created, as the learner writes it: their first event's time (a merged
 * person's the earlier of the two), events sent without a person profile making none.
 */
export async function seedChdb(prefix: string): Promise<{ query: QueryService; persons: PersonCreation; close: () => Promise<void> }> {
  const url = chdbUrl(`${prefix}_${crypto.randomUUID().slice(0, 8)}`)
  const store = new ClickHouseEventStore(url, { client: chdbClient() })
  await store.init()
  const ghost: Seeded[] = [{ event: '$pageview', timestamp: '2024-06-04T12:00:00Z', properties: { distinct_id: 'ghost' } }]
  const teams: [number, Seeded[]][] = [[CHDB_TEAMS.newYork, LIFECYCLE_EVENTS], [CHDB_TEAMS.fiveYears, FIVE_YEAR_EVENTS], [CHDB_TEAMS.ghost, ghost]]
  await store.insertBatch(
    teams.flatMap(([teamId, events]) =>
      events.map((e) => {
        const { distinct_id, ...properties } = e.properties
        return event({ teamId, event: e.event, distinctId: String(distinct_id), timestamp: Date.parse(e.timestamp), properties: JSON.stringify(properties) })
      }),
    ),
    { inDoubt: false },
  )
  const mapping = teams.flatMap(([teamId, events]) =>
    [...new Set(events.map((e) => String(e.properties.distinct_id)))].filter((id) => PERSON_OF[id]).map((distinctId) => ({ teamId, distinctId, personId: PERSON_OF[distinctId] })),
  )
  await new ClickHouseMappingSink(chdbClient(), store.database).write(mapping.map((m, i) => ({ ...m, version: i + 1 })))
  const created = new Map<string, number>()
  for (const [, events] of teams) {
    for (const e of events) {
      const person = PERSON_OF[String(e.properties.distinct_id)]
      if (!person || person === PERSON_OF.ghost || e.properties.$process_person_profile === false) continue
      created.set(person, Math.min(created.get(person) ?? Infinity, Date.parse(e.timestamp)))
    }
  }
  const persons: PersonCreation = async (_teamId, uuids) => new Map(uuids.filter((u) => created.has(u)).map((u) => [u, created.get(u)!]))
  const query = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
  return { query, persons, close: () => store.close() }
}

export function chdbInsights(query: QueryService, persons: PersonCreation): InsightsService {
  return new InsightsService(query, { cacheTtlMs: 0, cacheMaxBytes: 0 })
    .register('LifecycleQuery', lifecycleRunner({ persons, timeoutMs: 30_000 }))
    .register('StickinessQuery', runStickiness)
}
