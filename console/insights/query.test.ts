import { describe, expect, test } from 'bun:test'
import { funnelFormOf, funnelProblem, funnelsQuery, lifecycleFormOf, lifecycleQuery, newFunnelForm, newRetentionForm, newTrendForm, retentionFormOf, retentionIntervals, stickinessQuery, retentionQuery, sourceOf, trendFormOf, trendProblem, trendsQuery } from './query'

describe('the query nodes of the Insights page', () => {
  test('a trend with a filter, a breakdown, an interval, a range and compare', () => {
    const form = { ...newTrendForm(), filter: { key: 'price', operator: 'gt', value: '10' }, breakdown: ' $browser ', interval: 'week' as const, dateFrom: '-30d', compare: true }
    expect(trendsQuery(form)).toEqual({
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: '$pageview', name: '$pageview', math: 'total' }],
      interval: 'week',
      dateRange: { date_from: '-30d' },
      properties: [{ key: 'price', operator: 'gt', type: 'event', value: 10 }],
      breakdownFilter: { breakdown: '$browser', breakdown_type: 'event', breakdown_limit: 10 },
      compareFilter: { compare: true },
    })
  })

  test('an empty event is every event; a property math carries its property; is_set has no value', () => {
    const form = { ...newTrendForm(), series: [{ event: '', math: 'sum', mathProperty: 'price' }], filter: { key: 'plan', operator: 'is_set', value: 'x' } }
    const node = trendsQuery(form) as any
    expect(node.series[0]).toEqual({ kind: 'EventsNode', event: null, name: 'All events', math: 'sum', math_property: 'price' })
    expect(node.properties).toEqual([{ key: 'plan', operator: 'is_set', type: 'event' }])
    expect(node.breakdownFilter).toBeUndefined()
    expect(trendProblem({ ...form, series: [{ event: 'a', math: 'avg', mathProperty: ' ' }] })).toContain('Series A')
    expect(trendProblem(form)).toBeNull()
  })

  test('a funnel with its window and order', () => {
    const form = { ...newFunnelForm(), steps: ['signup', 'purchase'], windowInterval: 2, windowUnit: 'hour', order: 'strict' as const }
    expect(funnelsQuery(form)).toEqual({
      kind: 'FunnelsQuery',
      series: [
        { kind: 'EventsNode', event: 'signup', name: 'signup' },
        { kind: 'EventsNode', event: 'purchase', name: 'purchase' },
      ],
      dateRange: { date_from: '-30d' },
      funnelsFilter: { funnelWindowInterval: 2, funnelWindowIntervalUnit: 'hour', funnelOrderType: 'strict' },
    })
    expect(funnelProblem({ ...form, steps: ['a'] })).not.toBeNull()
  })

  test("a saved insight's source, whatever its wrapper", () => {
    expect(sourceOf({ kind: 'InsightVizNode', source: { kind: 'TrendsQuery' } })).toEqual({ kind: 'TrendsQuery' })
    expect(sourceOf({ kind: 'HogQLQuery', query: 'SELECT 1' })?.kind).toBe('HogQLQuery')
    expect(sourceOf(null)).toBeNull()
  })
})

describe('a saved query back in the forms', () => {
  test('what the forms send comes back as the same forms', () => {
    const trend = { ...newTrendForm(), series: [{ event: 'a', math: 'sum', mathProperty: 'price' }, { event: '', math: 'dau', mathProperty: '' }], filter: { key: 'plan', operator: 'gt', value: '3', type: 'event' as const }, breakdown: '$browser', interval: 'hour' as const, dateFrom: '-24h', compare: true }
    expect(trendFormOf(trendsQuery(trend))).toEqual(trend)
    const funnel = { ...newFunnelForm(), steps: ['a', 'b', 'c'], windowInterval: 3, windowUnit: 'week', order: 'unordered' as const, dateFrom: '-90d', breakdown: 'plan' }
    expect(funnelFormOf(funnelsQuery(funnel))).toEqual(funnel)
    const retention = { ...newRetentionForm(), targetEvent: 'signup', returningEvent: '$pageview', dateFrom: '-30d', period: 'Week' as const, retentionType: 'retention_first_time' }
    expect(retentionFormOf(retentionQuery(retention))).toEqual(retention)
  })

  test('a node from elsewhere fills what it can, defaults the rest', () => {
    expect(trendFormOf({ kind: 'TrendsQuery', series: [{ kind: 'EventsNode', event: 'x' }], interval: 'fortnight' })).toEqual({ ...newTrendForm(), series: [{ event: 'x', math: 'total', mathProperty: '' }] })
    expect(funnelFormOf({ kind: 'FunnelsQuery' })).toEqual(newFunnelForm())
  })
})

describe('round three: lifecycle, stickiness, a person breakdown, retention periods', () => {
  test('the nodes the new tabs send, and the forms they come back to', () => {
    const form = { event: 'signup', interval: 'week' as const, dateFrom: '-90d' }
    expect(lifecycleQuery(form)).toEqual({ kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: 'signup', name: 'signup' }], interval: 'week', dateRange: { date_from: '-90d' } })
    expect(stickinessQuery(form).kind).toBe('StickinessQuery')
    expect(lifecycleFormOf(stickinessQuery(form))).toEqual(form)
  })

  test('a breakdown by a person property says so', () => {
    const node = trendsQuery({ ...newTrendForm(), breakdown: 'plan', breakdownType: 'person' })
    expect(node.breakdownFilter).toEqual({ breakdown: 'plan', breakdown_type: 'person', breakdown_limit: 10 })
    expect(trendFormOf(node).breakdownType).toBe('person')
  })

  test("retention's period and type, and a row as long as the range", () => {
    const node = retentionQuery({ ...newRetentionForm(), period: 'Week', retentionType: 'retention_first_time', dateFrom: '-90d' }) as any
    expect(node.retentionFilter).toMatchObject({ period: 'Week', retentionType: 'retention_first_time', totalIntervals: 14 })
    expect(retentionIntervals({ ...newRetentionForm(), dateFrom: '-7d' })).toBe(8)
  })

  test('retention over the last 90 days: 91 daily cohorts, as PostHog draws it (not an off-by-one)', () => {
    // PostHog (QueryDateRangeWithIntervals, its date-range retention of 2025) counts the periods from the start of
    // date_from's period to the end of the current one: -90d by Day is the day 90 days ago through today, 91 rows,
    // as its trends' "Last 7 days" has 8 days. The API draws the rows the same way; the console asks for as many
    // values per row (totalIntervals), so the oldest cohort can be followed to today.
    expect(retentionIntervals({ ...newRetentionForm(), dateFrom: '-90d', period: 'Day' })).toBe(91)
    expect(retentionIntervals({ ...newRetentionForm(), dateFrom: '-30d', period: 'Day' })).toBe(31)
    expect(retentionIntervals({ ...newRetentionForm(), dateFrom: '-90d', period: 'Week' })).toBe(14)
  })

  test('a funnel waits for every step to name its event', () => {
    expect(funnelProblem(newFunnelForm())).toBe('Step 2 needs an event or an action.')
    expect(funnelProblem({ ...newFunnelForm(), steps: ['a', 'b'] })).toBeNull()
  })
})

describe('round three: person and cohort filters', () => {
  test("a person property filter and a cohort filter, as PostHog writes them, and back into the form", () => {
    const person = trendsQuery({ ...newTrendForm(), filter: { key: 'plan', operator: 'exact', value: 'pro', type: 'person' } })
    expect(person.properties).toEqual([{ key: 'plan', operator: 'exact', type: 'person', value: 'pro' }])
    expect(trendFormOf(person).filter.type).toBe('person')
    const cohort = trendsQuery({ ...newTrendForm(), filter: { key: 'id', operator: 'not_in', value: '7', type: 'cohort' } })
    expect(cohort.properties).toEqual([{ key: 'id', value: 7, type: 'cohort', operator: 'not_in' }])
    expect(trendFormOf(cohort).filter).toEqual({ key: 'id', operator: 'not_in', value: '7', type: 'cohort' })
    // no cohort chosen yet: no filter
    expect(trendsQuery({ ...newTrendForm(), filter: { key: 'id', operator: 'in', value: '', type: 'cohort' } }).properties).toBeUndefined()
  })
})

describe('actions as series and steps', () => {
  test('a series with an action sends an ActionsNode (its math kept) and reads back into the form', () => {
    const form = { ...newTrendForm(), series: [{ event: '$pageview', math: 'dau', mathProperty: '', action: { id: 7, name: 'Signed up' } }] }
    const node = trendsQuery(form)
    expect(node.series).toEqual([{ kind: 'ActionsNode', id: 7, name: 'Signed up', math: 'dau' }])
    expect(trendFormOf(node).series[0]).toEqual({ event: '', math: 'dau', mathProperty: '', action: { id: 7, name: 'Signed up' } })
    expect(trendFormOf(trendsQuery(newTrendForm())).series[0].action).toBeUndefined()
  })

  test('a funnel step may be an action; an empty step with an action is complete', () => {
    const form = { ...newFunnelForm(), steps: ['$pageview', ''], stepActions: [null, { id: 3, name: 'Purchased' }] }
    expect(funnelProblem(form)).toBeNull()
    const node = funnelsQuery(form)
    expect(node.series).toEqual([
      { kind: 'EventsNode', event: '$pageview', name: '$pageview' },
      { kind: 'ActionsNode', id: 3, name: 'Purchased' },
    ])
    expect(funnelFormOf(node).stepActions).toEqual([null, { id: 3, name: 'Purchased' }])
    // a saved node naming no valid id is read as the event
    expect(funnelFormOf({ ...node, series: [{ kind: 'ActionsNode', id: 'x' }, { kind: 'EventsNode', event: 'b' }] }).stepActions).toBeUndefined()
  })
})
