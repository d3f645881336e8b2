// LifecycleQuery on the current ClickHouse engine (chDB, in-process): the runner over the contract's events stored
// in chDB (insights-lifecycle-chdb.ts), with the contract's answers; and an id whose person has no row, left out.
import { expect, test } from 'bun:test'
import { describeWithChdb } from '../helpers/chdb'
import { ALL_FIVE_YEARS, byStatus, EXPECTED, expectFiveYears, MONDAY_WEEKS, MONTHS, NY_DAYS, SUNDAY_WEEKS } from './insights-lifecycle.contract'
import { chdbInsights, CHDB_TEAMS, seedChdb } from './insights-lifecycle-chdb'

describeWithChdb('lifecycle on chDB', () => {
  test('the contract’s statuses over local days, weeks and months; five years of days; a person without a row', async () => {
    const { query, persons, close } = await seedChdb('lifecycle')
    const insights = chdbInsights(query, persons)
    const newYork = { id: CHDB_TEAMS.newYork, timezone: 'America/New_York', weekStartDay: 0 }
    const lifecycle = async (extra: Record<string, unknown>, project = newYork) =>
      byStatus((await insights.run(project, { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], ...extra })) as never)
    expect(await lifecycle({ dateRange: NY_DAYS })).toEqual(EXPECTED.newYorkDays)
    expect(await lifecycle({ dateRange: NY_DAYS }, { ...newYork, timezone: 'UTC' })).toEqual(EXPECTED.utcDays)
    expect(await lifecycle({ dateRange: SUNDAY_WEEKS, interval: 'week' })).toEqual(EXPECTED.sundayWeeks)
    expect(await lifecycle({ dateRange: MONDAY_WEEKS, interval: 'week' }, { ...newYork, weekStartDay: 1 })).toEqual(EXPECTED.mondayWeeks)
    expect(await lifecycle({ dateRange: MONTHS, interval: 'month' })).toEqual(EXPECTED.months)
    const fiveYears = { id: CHDB_TEAMS.fiveYears, timezone: 'UTC', weekStartDay: 0 }
    expectFiveYears((await insights.run(fiveYears, { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: ALL_FIVE_YEARS })) as never)
    const hours = await insights.run(fiveYears, { kind: 'LifecycleQuery', series: [{ kind: 'EventsNode', event: '$pageview' }], dateRange: ALL_FIVE_YEARS, interval: 'hour' }).catch((e) => e)
    expect(hours).toMatchObject({ status: 400, code: 'too_many_buckets' })
    // the ghost's events carry a person id, but no person was ever created: nobody is new, nobody is counted
    const ghost = await lifecycle({ dateRange: NY_DAYS }, { id: CHDB_TEAMS.ghost, timezone: 'UTC', weekStartDay: 0 })
    expect(ghost).toEqual({ new: [0, 0, 0, 0, 0], returning: [0, 0, 0, 0, 0], resurrecting: [0, 0, 0, 0, 0], dormant: [0, 0, 0, 0, 0] })
    await close()
  }, 120_000)
})
