// Trends broken down by a person property. Persons live in Postgres and events in the event store, so the events are
// counted per person (and bucket) in the store, each person's value is read from Postgres as it is now, and the
// per-person parts are combined per value here. Each math is split into parts that combine exactly: counts and sums
// add, minima and maxima take the extreme, an average is its sum over its count, and "distinct persons" counts the
// persons themselves. At most MAX_BREAKDOWN_PERSONS rows; past it the breakdown is refused by name.
import { BREAKDOWN_NULL, BREAKDOWN_OTHER, keptValues } from './breakdown-values'
import { unsupported } from './hogql'
import { MAX_BREAKDOWN_PERSONS } from './person-sets'
import type { InsightContext } from './service'

/**
 * Whose property a breakdown reads: the person's (the default), or the group's of one type (the event's key of that
 * type as `column`: an event without one has the null value). `valuesOf`: their values now, as text.
 */
export interface ActorOf {
  column: string
  valuesOf(ids: string[]): Promise<Map<string, string | null>>
}

interface Parts {
  /** HogQL aggregates per person (and bucket) */
  select: string[]
  /** the parts of one value, combined over its persons */
  combine(rows: number[][]): number
}

export function mathParts(math: string, column: () => string, session: string, attr: string): Parts {
  const total = (rows: number[][]) => rows.reduce((n, r) => n + r[0], 0)
  switch (math) {
    case 'total':
      return { select: ['count()'], combine: total }
    case 'dau':
      return { select: ['1'], combine: (rows) => rows.length }
    case 'unique_session':
      // a session belongs to one person
      return { select: [`count(DISTINCT ${session})`], combine: total }
    case 'sum':
      return { select: [`coalesce(sum(${column()}), 0)`], combine: total }
    case 'min':
    case 'max': {
      const pick = math === 'min' ? Math.min : Math.max
      return { select: [`${math}(${column()})`], combine: (rows) => (rows.length === 0 ? 0 : pick(...rows.map((r) => r[0]))) }
    }
    case 'avg':
      return {
        select: [`coalesce(sum(${column()}), 0)`, `count(${column()})`],
        combine: (rows) => {
          const n = rows.reduce((c, r) => c + r[1], 0)
          return n === 0 ? 0 : rows.reduce((s, r) => s + r[0], 0) / n
        },
      }
    default:
      return unsupported(`math "${math}" cannot be broken down by a person property yet`, attr)
  }
}

/**
 * The values kept (largest first) and rows (bucket start | null, value, number) for the events of `where`: the
 * values past `limit` combined as "other" from their persons' parts, so that every math stays exact.
 * `bucket` null: one number per value over the whole range.
 */
export async function personBreakdown(
  ctx: InsightContext,
  query: { where: string; bucket: string | null; parts: Parts; key: string; limit: number; hideOther: boolean; attr: string; by?: ActorOf },
): Promise<{ values: string[]; rows: unknown[][] }> {
  const { bucket, parts, attr } = query
  const by: ActorOf = query.by ?? { column: 'person_id', valuesOf: (ids) => ctx.personProperty(ids, query.key, attr) }
  const group = bucket === null ? 'actor' : 'bucket, actor'
  const columns = [bucket === null ? null : `${bucket} AS bucket`, `${by.column} AS actor`, ...parts.select.map((s, i) => `${s} AS part_${i}`)].filter((c) => c !== null)
  const answer = await ctx.hogql(`SELECT ${columns.join(', ')} FROM events WHERE ${query.where} GROUP BY ${group} LIMIT ${MAX_BREAKDOWN_PERSONS}`)
  if (answer.hasMore || answer.results.length >= MAX_BREAKDOWN_PERSONS) {
    unsupported(`A person-property breakdown reads at most ${MAX_BREAKDOWN_PERSONS} persons × buckets: pick a shorter range or a larger interval`, attr)
  }
  const offset = bucket === null ? 0 : 1
  const persons = [...new Set(answer.results.map((r) => r[offset]).filter((p): p is string => typeof p === 'string'))]
  const valueOf = await by.valuesOf(persons)
  const rowsOf = (row: unknown[]) => row.slice(offset + 1).map((v) => Number(v ?? 0))
  const value = (row: unknown[]) => (typeof row[offset] === 'string' ? valueOf.get(row[offset] as string) : null) ?? BREAKDOWN_NULL
  // rank by each value's parts over the whole range
  const byValue = new Map<string, number[][]>()
  for (const row of answer.results) {
    const v = value(row)
    const list = byValue.get(v)
    if (list) list.push(rowsOf(row))
    else byValue.set(v, [rowsOf(row)])
  }
  const totals = new Map([...byValue].map(([v, rows]) => [v, parts.combine(rows)]))
  const { kept, other } = keptValues(totals, query.limit, query.hideOther)
  const keptSet = new Set(kept)
  // (bucket, value or other) → the per-person parts
  const groups = new Map<string, { bucket: unknown; value: string; rows: number[][] }>()
  for (const row of answer.results) {
    let v = value(row)
    if (!keptSet.has(v)) {
      if (!other) continue
      v = BREAKDOWN_OTHER
    }
    const at = bucket === null ? null : row[0]
    const id = `${String(at)}\n${v}`
    let entry = groups.get(id)
    if (!entry) groups.set(id, (entry = { bucket: at, value: v, rows: [] }))
    entry.rows.push(rowsOf(row))
  }
  return { values: [...kept, ...(other ? [BREAKDOWN_OTHER] : [])], rows: [...groups.values()].map((g) => [g.bucket, g.value, parts.combine(g.rows)]) }
}
