// LifecycleQuery: per period of the range, the persons who were new (active in the period their person was created
// in), returning (active in the period before too), resurrecting (active after a gap, or active first in the
// window without having been created then) and dormant (active in the period before, not in this one; counted
// negative). The store answers one row per person and active period, from one period before the range (so the
// first period's statuses are known) to the end of the last, read in pages ordered by person; when each person was
// created comes from Postgres, where persons live. Personless events (`$process_person_profile: false`, or an id
// without a person row) are left out: without a person there is no "new".
import type { Sql } from 'postgres'
import { ApiError, errors } from '../http/errors'
import { buckets, bucketIndexOfWall, type Bucket } from './buckets'
import { addUnits, startOfUnit, type Interval, type Unit } from './date-range'
import { propertyCondition } from './filters'
import { and, bucketOfRow, bucketStart, inRange, str, unsupported } from './hogql'
import type { LifecycleQuery } from './model'
import type { InsightContext, KindAnswer } from './service'
import { wallTimeOf, wallToUtc } from '../lib/timezone'

/** Rows (person × active period) one lifecycle may read; past it the question is refused, not answered in part. */
export const MAX_LIFECYCLE_ROWS = 1_000_000
/** Rows one page asks for: more than a person can have (MAX_BUCKETS + 1 periods), so a page holds whole persons. */
export const LIFECYCLE_PAGE_ROWS = 50_000
/** Persons whose creation one Postgres statement reads. */
const PERSONS_PER_LOOKUP = 5_000

export const LIFECYCLE_STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const
export type LifecycleStatus = (typeof LIFECYCLE_STATUSES)[number]

const UNIT: Record<Interval, Unit> = { hour: 'h', day: 'd', week: 'w', month: 'm' }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** When each of these persons (uuids, lower case) was created (UTC ms); a person without a row is absent. */
export type PersonCreation = (teamId: number, uuids: readonly string[]) => Promise<Map<string, number>>

/** Persons' creation times read from Postgres. */
export function personCreation(sql: Sql): PersonCreation {
  return async (teamId, uuids) => {
    const out = new Map<string, number>()
    // a person id that is no uuid has no row (and would stop the cast)
    const valid = uuids.filter((u) => UUID.test(u))
    for (let at = 0; at < valid.length; at += PERSONS_PER_LOOKUP) {
      const chunk = valid.slice(at, at + PERSONS_PER_LOOKUP)
      const rows = await sql<{ uuid: string; created_at: Date }[]>`
        select uuid::text as uuid, created_at from persons where team_id = ${teamId} and uuid = any(${chunk}::uuid[])`
      for (const row of rows) out.set(row.uuid.toLowerCase(), row.created_at.getTime())
    }
    return out
  }
}

export interface LifecycleOptions {
  /** where persons' creation times come from (none: lifecycles are refused) */
  persons?: PersonCreation
  pageRows: number
  maxRows: number
  /** QUERY_TIMEOUT_MS: the pages of one lifecycle within it (each statement has it too), checked before each next page */
  timeoutMs: number
}

/**
 * One person's statuses from the periods they were active in (indexes, ascending, without repeats) and the index
 * of the period their person was created in (-1: none of these): [period index, status] pairs. The first active
 * period is new when it is the creation's, else resurrecting; a later one returning when the period before it was
 * active, else resurrecting; the period after each active one that is not active is dormant.
 */
export function statusesOf(active: readonly number[], createdIndex: number): [number, LifecycleStatus][] {
  const out: [number, LifecycleStatus][] = []
  active.forEach((period, j) => {
    if (j === 0) out.push([period, period === createdIndex ? 'new' : 'resurrecting'])
    else out.push([period, active[j - 1] === period - 1 ? 'returning' : 'resurrecting'])
    if (active[j + 1] !== period + 1) out.push([period + 1, 'dormant'])
  })
  return out
}

function tooMany(maxRows: number): never {
  throw errors.validation(
    'too_many_rows',
    `This lifecycle reads more than ${maxRows.toLocaleString('en-US')} rows (persons × active periods): pick a larger interval, a shorter range or narrower filters.`,
    'query__dateRange',
  )
}

/** The runner, with its page size and row cap (the defaults, or smaller ones where a test pages through few rows). */
export function lifecycleRunner(options: Partial<LifecycleOptions> & { timeoutMs: number }) {
  const limits: LifecycleOptions = { pageRows: LIFECYCLE_PAGE_ROWS, maxRows: MAX_LIFECYCLE_ROWS, ...options }
  return (query: LifecycleQuery, ctx: InsightContext) => runLifecycle(query, ctx, limits)
}

async function runLifecycle(query: LifecycleQuery, ctx: InsightContext, options: LifecycleOptions): Promise<KindAnswer> {
  // PostHog reads every series' event as one more condition on the same events: two different events meet none
  if (query.series.length > 1) unsupported('A lifecycle counts one series: send one EventsNode or ActionsNode', 'query__series')
  const persons = options.persons
  if (!persons) return unsupported('Lifecycles need the persons store (when each person was created)', 'query__kind')
  const series = query.series[0]
  const interval = query.interval ?? 'day'
  const unit = UNIT[interval]
  const { timezone, weekStartDay } = ctx.project
  const range = await ctx.dateRange(query.dateRange, interval)
  const list = buckets(range, interval, { timezone, weekStartDay })
  // whole periods, and the one before the first: a person active then is returning (or dormant) in the first
  const previousWall = addUnits(list[0].wallStart, unit, -1)
  const from = wallToUtc(timezone, previousWall)
  const to = wallToUtc(timezone, addUnits(list[list.length - 1].wallStart, unit, 1))
  const periods: Bucket[] = [{ start: from, end: list[0].start, wallStart: previousWall, day: '', label: '' }, ...list]

  const entity = await ctx.entity(series, 'query__series__0')
  const where = and([
    entity.condition,
    inRange(from, to),
    await ctx.properties(query.properties, 'query__properties'),
    await ctx.properties(series.properties, 'query__series__0__properties'),
    'person_id IS NOT NULL',
    // events sent without a person profile have none to be new or returning
    propertyCondition({ key: '$process_person_profile', value: false, operator: 'is_not' }, 'query__series__0'),
  ])
  const period = bucketStart(interval, timezone, from, to, weekStartDay)
  const counts = Object.fromEntries(LIFECYCLE_STATUSES.map((s) => [s, new Array<number>(list.length).fill(0)])) as Record<LifecycleStatus, number[]>
  const started = Date.now()
  let after: string | null = null
  let read = 0
  for (;;) {
    if (after !== null && Date.now() - started > options.timeoutMs) {
      throw new ApiError(504, 'server_error', 'query_timeout', `The lifecycle's persons were not read within QUERY_TIMEOUT_MS (${options.timeoutMs} ms): pick a shorter date range or a narrower series`)
    }
    const answer = await ctx.hogql(
      `SELECT person_id, ${period} AS period FROM events WHERE ${and([where, after === null ? null : `person_id > ${str(after)}`])} ` +
        `GROUP BY person_id, period ORDER BY person_id, period LIMIT ${options.pageRows}`,
    )
    let rows = answer.results
    if (answer.hasMore) {
      // the page may end inside a person: their rows are read again with the next page
      const last = String(rows[rows.length - 1]?.[0])
      rows = rows.filter((row) => String(row[0]) !== last)
      if (rows.length === 0) tooMany(options.maxRows)
    }
    read += rows.length
    if (read > options.maxRows) tooMany(options.maxRows)
    const active = new Map<string, number[]>()
    for (const row of rows) {
      const index = bucketOfRow(periods, row[1], interval, weekStartDay)
      if (index < 0) continue
      const id = String(row[0]).toLowerCase()
      const list = active.get(id)
      if (list) list.push(index)
      else active.set(id, [index])
    }
    const created = await persons(ctx.project.id, [...active.keys()])
    for (const [id, indexes] of active) {
      const createdAt = created.get(id)
      // an id whose person has no row (a personless visitor's) is no person here
      if (createdAt === undefined) continue
      const createdIndex = bucketIndexOfWall(periods, startOfUnit(wallTimeOf(timezone, createdAt), unit, weekStartDay))
      const sorted = [...new Set(indexes)].sort((a, b) => a - b)
      for (const [index, status] of statusesOf(sorted, createdIndex)) {
        // index 0 is the period before the range; past the last period is past the range
        if (index < 1 || index > list.length) continue
        counts[status][index - 1] += status === 'dormant' ? -1 : 1
      }
    }
    if (!answer.hasMore) break
    after = String(rows[rows.length - 1][0])
  }

  const name = entity.name
  const action: Record<string, unknown> = { id: entity.id, name, type: entity.type, order: 0, math: 'total' }
  if (series.custom_name !== undefined && series.custom_name !== null) action.custom_name = series.custom_name
  const labels = list.map((b) => b.label)
  const days = list.map((b) => b.day)
  const results = LIFECYCLE_STATUSES.map((status) => ({
    action,
    data: counts[status],
    count: counts[status].reduce((a, b) => a + b, 0),
    labels,
    days,
    label: `${name} - ${status}`,
    status,
  }))
  return { body: { results }, range }
}
