// Actions in insights on the current ClickHouse engine (chDB 26.7, in-process): the insights service over a store
// filled through the event store and the person mapping sink, the actions' bodies read by the API's own validation
// and compiled by its own compiler (src/actions/), with the same events and answers as the other stores. Lifecycles
// need Postgres (when persons were created): the other stores' contract covers them.
import { expect, test } from 'bun:test'
import { actionCondition } from '../../src/actions/compile'
import { validateActionBody } from '../../src/actions/validation'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import type { ActionLookup } from '../../src/insights/entities'
import { createInsightsService } from '../../src/insights/kinds'
import { ClickHouseMappingSink } from '../../src/query/person-mapping'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { event } from './event-store.contract'
import { ACTION_EVENTS, EXPECTED } from './insights-actions.contract'

describeWithChdb('actions in insights on chDB (ClickHouse 26.7)', () => {
  test('trends, funnels, retention, stickiness, regex and element steps as on the other stores', async () => {
    const url = chdbUrl(`actions_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    await store.insertBatch(
      ACTION_EVENTS.map((e) => {
        const { distinct_id, ...properties } = e.properties
        return event({ teamId: 1, event: e.event, distinctId: String(distinct_id), timestamp: Date.parse(e.timestamp), properties: JSON.stringify(properties) })
      }),
      { inDoubt: false },
    )
    const users = ['u1', 'u2', 'u3', 'u4', 'u5']
    await new ClickHouseMappingSink(chdbClient(), store.database).write(users.map((distinctId, i) => ({ teamId: 1, distinctId, personId: `00000000-0000-4000-8000-00000000000${i + 1}`, version: i + 1 })))

    const bodies: Record<string, unknown>[] = [
      { name: 'Pricing or buy', steps: [{ event: '$pageview', url: '/pricing', url_matching: 'contains' }, { event: '$autocapture', text: 'Buy now', text_matching: 'exact' }] },
      { name: 'Paid', steps: [{ event: 'purchase' }, { event: 'signup', properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }] }] },
      ...EXPECTED.elementSteps.map(([step], i) => ({ name: `Element ${i}`, steps: [step] })),
    ]
    const actions = bodies.map((body) => validateActionBody(body, 'POST'))
    const lookup: ActionLookup = {
      async condition(_teamId, id, properties, attr) {
        const action = actions[id]
        return action ? { name: action.name!, condition: await actionCondition(action.steps ?? [], attr, properties) } : null
      },
    }
    const query = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    const insights = createInsightsService(query, { cacheTtlMs: 0, cacheMaxBytes: 0, actions: lookup }, { funnels: { maxEvents: 1_000_000, timeoutMs: 30_000 } })
    const project = { id: 1, timezone: 'UTC', weekStartDay: 0 }
    const RANGE = { date_from: '2024-05-01', date_to: '2024-05-03' }
    const node = (id: number, extra: Record<string, unknown> = {}) => ({ kind: 'ActionsNode', id, ...extra })
    const run = async (q: Record<string, unknown>) => (await insights.run(project, { dateRange: RANGE, ...q })) as { results: any[] }

    const trends = await run({ kind: 'TrendsQuery', series: [node(0), node(0, { math: 'dau' }), node(1)] })
    expect(trends.results.map((r) => r.data)).toEqual([EXPECTED.trendsA, EXPECTED.trendsADau, EXPECTED.trendsB])
    const funnel = await run({ kind: 'FunnelsQuery', series: [node(0), node(1)] })
    expect(funnel.results.map((s) => s.count)).toEqual(EXPECTED.funnelAB)
    const retention = await run({
      kind: 'RetentionQuery',
      retentionFilter: { period: 'Day', totalIntervals: 3, retentionType: 'retention_recurring', targetEntity: { id: 0, type: 'actions' }, returningEntity: { id: 1, type: 'actions' } },
    })
    expect(retention.results.map((row) => row.values.map((v: { count: number }) => v.count))).toEqual(EXPECTED.retentionAB)
    const stickiness = await run({ kind: 'StickinessQuery', series: [node(0), node(1), { kind: 'EventsNode', event: '$pageview' }] })
    expect(stickiness.results.map((r) => r.data)).toEqual(EXPECTED.stickinessAB)
    const elements = await run({ kind: 'TrendsQuery', series: EXPECTED.elementSteps.map((_, i) => node(i + 2)) })
    expect(elements.results.map((r, i) => [EXPECTED.elementSteps[i][0], r.data])).toEqual(EXPECTED.elementSteps.map(([step, data]) => [step, data]))
    await store.close()
  }, 120_000)
})
