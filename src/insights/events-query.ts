// EventsQuery: rows of events as PostHog's activity view and scripts ask for them: `select` expressions (an
// aggregate among them groups by the others), `where` conditions, `orderBy`, the event and property filters, a time
// window (`after`, default the last 24 hours; `before`), and limit/offset/hasMore. Each member written by the user
// must be exactly one expression of the HogQL subset: it is parsed alone first, so that nothing in it (a comment,
// a FROM, a second statement) can change the query it is placed in.
import type { Expr } from '../query/ast'
import { QueryError } from '../query/errors'
import { isAggregate } from '../query/functions'
import { parseExpression, type ParsedExpression } from '../query/parser'
import { errors } from '../http/errors'
import { resolveDateRange } from './date-range'
import { and, isEvent, str, time } from './hogql'
import type { EventsQuery } from './model'
import type { InsightContext, KindAnswer } from './service'

export const DEFAULT_EVENTS_LIMIT = 100
export const DEFAULT_EVENTS_AFTER = '-24h'
/** `"*"`: the event as an object, PostHog's fields in its order. */
const STAR_COLUMNS = ['uuid', 'event', 'properties', 'timestamp', 'distinct_id', 'created_at']

/** One user expression, parsed alone; a refusal names the member (`query__select__2`). */
function member(text: string, attr: string, options: { alias?: boolean; order?: boolean }): ParsedExpression {
  try {
    return parseExpression(text, options)
  } catch (error) {
    if (error instanceof QueryError) throw errors.validation('invalid_input', error.message, attr)
    throw error
  }
}

function hasAggregate(expr: Expr): boolean {
  switch (expr.k) {
    case 'call':
      return isAggregate(expr.name) || expr.args.some(hasAggregate)
    case 'unary':
      return hasAggregate(expr.arg)
    case 'binary':
      return hasAggregate(expr.left) || hasAggregate(expr.right)
    case 'in':
      return hasAggregate(expr.arg) || expr.list.some(hasAggregate)
    case 'between':
      return hasAggregate(expr.arg) || hasAggregate(expr.low) || hasAggregate(expr.high)
    case 'like':
      return hasAggregate(expr.arg) || hasAggregate(expr.pattern)
    case 'isNull':
      return hasAggregate(expr.arg)
    case 'interval':
      return hasAggregate(expr.count)
    case 'case':
      return [expr.operand, expr.otherwise, ...expr.whens.flatMap((w) => [w.when, w.then])].some((e) => e !== null && hasAggregate(e))
    default:
      return false
  }
}

/** The text placed in the query: parenthesised, and ended by a line break so no comment can reach past it. */
function placed(parsed: ParsedExpression): string {
  return `(${parsed.text}\n)`
}

/** `after`/`before` as an instant: a relative date (-24h, -7d), an ISO date or date-time, in the project's zone. */
function instant(text: string, ctx: InsightContext, attr: string): number {
  try {
    // read as a range's start; its end far off so that an instant after now is allowed too
    return resolveDateRange({ date_from: text, date_to: '2099-12-31', explicitDate: true }, { now: ctx.now, timezone: ctx.project.timezone, interval: 'day' }).from
  } catch (error) {
    const e = error as { detail?: string; message?: string }
    throw errors.validation('invalid_date_range', e.detail ?? e.message ?? 'not a date', attr)
  }
}

interface Column {
  /** what the answer's `columns` say: the member as sent */
  name: string
  star: boolean
  /** HogQL text of the column(s) it reads, without its alias */
  expr: string
  alias: string | null
  aggregate: boolean
}

export async function runEventsQuery(query: EventsQuery, ctx: InsightContext): Promise<KindAnswer> {
  const columns: Column[] = query.select.map((text, i) => {
    if (text.trim() === '*') return { name: '*', star: true, expr: STAR_COLUMNS.join(', '), alias: null, aggregate: false }
    const parsed = member(text, `query__select__${i}`, { alias: true })
    return { name: text, star: false, expr: placed(parsed), alias: parsed.alias, aggregate: hasAggregate(parsed.expr) }
  })
  const grouped = columns.some((c) => c.aggregate)
  if (grouped && columns.some((c) => c.star)) throw errors.validation('invalid_input', '"*" cannot be selected with an aggregate', 'query__select')

  const after = query.after ?? DEFAULT_EVENTS_AFTER
  const conditions = [
    isEvent(query.event),
    await ctx.properties(query.properties, 'query__properties'),
    after === 'all' ? null : `timestamp > ${time(instant(after, ctx, 'query__after'))}`,
    query.before ? `timestamp < ${time(instant(query.before, ctx, 'query__before'))}` : null,
    query.personId ? `person_id = ${str(query.personId)}` : null,
    ...(query.where ?? []).map((text, i) => placed(member(text, `query__where__${i}`, {}))),
  ]

  const orderBy = (query.orderBy ?? []).map((text, i) => {
    const parsed = member(text, `query__orderBy__${i}`, { order: true })
    return `${placed(parsed)} ${parsed.desc ? 'DESC' : 'ASC'}`
  })
  if (orderBy.length === 0) {
    const firstAggregate = columns.find((c) => c.aggregate)
    orderBy.push(firstAggregate ? `${firstAggregate.expr} DESC` : 'timestamp DESC')
  }
  const groupBy = grouped ? columns.filter((c) => !c.aggregate).map((c) => c.expr) : []
  // the alias was checked by the parser: no quote, backslash or control character in it
  const selected = columns.map((c) => (c.alias ? `${c.expr} AS \`${c.alias}\`` : c.expr))

  const limit = query.limit ?? DEFAULT_EVENTS_LIMIT
  const offset = query.offset ?? 0
  const text =
    `SELECT ${selected.join(', ')} FROM events WHERE ${and(conditions)}` +
    (groupBy.length > 0 ? ` GROUP BY ${groupBy.join(', ')}` : '') +
    ` ORDER BY ${orderBy.join(', ')} LIMIT ${limit}${offset > 0 ? ` OFFSET ${offset}` : ''}`
  const answer = await ctx.hogql(text)

  // each member's place among the store's columns ("*" reads several)
  const results = answer.results.map((row) => {
    let at = 0
    return columns.map((column) => {
      if (!column.star) return row[at++]
      const values = row.slice(at, (at += STAR_COLUMNS.length))
      const [uuid, event, properties, timestamp, distinct_id, created_at] = values
      return { uuid, event, properties: parseProperties(properties), timestamp, team_id: ctx.project.id, distinct_id, elements_chain: '', created_at }
    })
  })
  const types = columns.map((column, i) => (column.star ? 'Tuple' : (answer.types?.[starOffset(columns, i)] ?? 'String')))
  return {
    body: { columns: columns.map((c) => c.name), types, results, hasMore: answer.hasMore, limit, offset },
    range: null,
  }
}

/** The store's column index of member i (each "*" before it reads several). */
function starOffset(columns: Column[], i: number): number {
  return columns.slice(0, i).reduce((n, c) => n + (c.star ? STAR_COLUMNS.length : 1), 0)
}

function parseProperties(value: unknown): unknown {
  if (typeof value !== 'string') return value ?? {}
  try {
    return JSON.parse(value)
  } catch {
    return {}
  }
}
