// Survey stats and the HogQL survey helpers on the current ClickHouse engine (chDB 26.7, in-process; the modern
// dialect, DateTime64 timestamps): the stats read of src/surveys/stats.ts through the query service over a store
// filled through the event store and the person mapping sink, with the numbers the other stores give
// (surveys.contract.ts): partial dismissals left out, persons once, those who only saw it.
import { expect, test } from 'bun:test'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { SurveyStatsService } from '../../src/surveys/stats'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { event } from './event-store.contract'

describeWithChdb('surveys on chDB (ClickHouse 26.7)', () => {
  test('stats per event, only-seen persons, rates; getSurveyResponse and uniqueSurveySubmissionsFilter', async () => {
    const url = chdbUrl(`surveys_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    const T0 = Date.UTC(2024, 4, 6, 12)
    const id = '01900000-0000-4000-8000-000000000001'
    const e = (name: string, who: string, ms: number, extra: Record<string, unknown> = {}) =>
      event({ teamId: 1, event: name, distinctId: who, timestamp: T0 + ms, properties: JSON.stringify({ $survey_id: id, ...extra }) })
    await store.insertBatch(
      [
        e('survey shown', 'answers', 1000),
        e('survey sent', 'answers', 2000, { '$survey_response_q-nps': 9, $survey_completed: true, $survey_submission_id: 's1' }),
        e('survey sent', 'partial', 2500, { '$survey_response_q-nps': 3, $survey_completed: false, $survey_submission_id: 's2' }),
        e('survey shown', 'dismisses', 1000),
        e('survey dismissed', 'dismisses', 3000),
        e('survey shown', 'half', 1000),
        e('survey dismissed', 'half', 4000, { $survey_partially_completed: true }),
        e('survey shown', 'looks', 1000),
        e('survey shown', 'looks', 5000),
        e('survey sent', 'legacy', 6000, { $survey_response: 7 }),
        e('survey shown', 'other', 1000, { $survey_id: 'another' }),
      ],
      { inDoubt: false },
    )
    const person = (n: number) => `00000000-0000-4000-8000-00000000000${n}`
    await new ClickHouseMappingSink(chdbClient(), store.database).write(
      ['answers', 'partial', 'dismisses', 'half', 'looks', 'legacy', 'other'].map((distinctId, i) => ({ teamId: 1, distinctId, personId: person(i + 1), version: i + 1 })),
    )
    const query = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    // every survey together (one survey's stats read its dates from Postgres: surveys.contract.ts)
    const stats = new SurveyStatsService({ sql: null as never, query })
    const all = await stats.stats(1, null, new Date(T0).toISOString(), new Date(T0 + 60_000).toISOString())
    expect(all.stats['survey shown']).toEqual({ total_count: 6, unique_persons: 5, first_seen: new Date(T0 + 1000).toISOString(), last_seen: new Date(T0 + 5000).toISOString(), unique_persons_only_seen: 3, total_count_only_seen: 4 })
    expect(all.stats['survey sent']).toMatchObject({ total_count: 3, unique_persons: 3 })
    expect(all.stats['survey dismissed']).toMatchObject({ total_count: 1, unique_persons: 1 })
    expect(all.rates).toEqual({ response_rate: 50, dismissal_rate: 16.67, unique_users_response_rate: 60, unique_users_dismissal_rate: 20 })
    const responses = await query.run(1, `SELECT distinct_id, getSurveyResponse(0, 'q-nps') FROM events WHERE uniqueSurveySubmissionsFilter('${id}') ORDER BY distinct_id`)
    expect(responses.results.map((r) => [r[0], String(r[1])])).toEqual([['answers', '9'], ['legacy', '7']])
    await store.close()
  })
})
