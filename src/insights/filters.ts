// PostHog's property filters as HogQL conditions over an event's properties. A missing property matches the
// negative operators (is_not, not_icontains), as in PostHog; comparisons read the property as a number.
import type { Static } from 'elysia'
import { likeEscaped } from '../lib/hogql-text'
import { QueryError } from '../query/errors'
import { checkRegex } from '../query/regex-check'
import { and, literal, str, time, unsupported, userProp } from './hogql'
import { Value } from '@sinclair/typebox/value'
import { Properties, type PropertyFilter } from './model'
import type { PersonFilterAt } from './person-sets'

type PropertiesInput = Static<typeof Properties> | undefined
/** The persons of each person or cohort filter, found beforehand (person-sets.ts). */
export type PersonsOfFilters = ReadonlyMap<PropertyFilter, readonly string[]>

function values(value: PropertyFilter['value']): (string | number | boolean)[] {
  if (Array.isArray(value)) return value
  return value === null || value === undefined ? [] : [value]
}

function dateOf(value: PropertyFilter['value'], attr: string): string {
  const text = String(Array.isArray(value) ? value[0] : value)
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text)
  if (!Number.isFinite(ms)) throw unsupported(`"${text.slice(0, 64)}" is not a date`, attr)
  return time(ms)
}

function isPersonFilter(filter: PropertyFilter): boolean {
  return filter.type !== undefined && filter.type !== 'event'
}

/** Every person or cohort filter of `properties`, with where it is (for the refusals). */
export function personFilters(input: PropertiesInput, attr: string): PersonFilterAt[] {
  if (input === null || input === undefined) return []
  if (Array.isArray(input)) return input.flatMap((filter, i) => (isPersonFilter(filter) ? [{ filter, attr: `${attr}__${i}` }] : []))
  return input.values.flatMap((value, i) =>
    'key' in value
      ? isPersonFilter(value) ? [{ filter: value, attr: `${attr}__values__${i}` }] : []
      : value.values.flatMap((filter, j) => (isPersonFilter(filter) ? [{ filter, attr: `${attr}__values__${i}__values__${j}` }] : [])),
  )
}

/** A filter's regular expression as match() takes it, or a refusal naming `attr`. */
function checkedRegex(pattern: string, attr: string): string {
  try {
    checkRegex(pattern, 'match')
  } catch (error) {
    if (error instanceof QueryError) unsupported(error.message, attr)
    throw error
  }
  return pattern
}

/** One property filter as a condition: an event property's, or the persons a person or cohort filter holds. */
export function propertyCondition(filter: PropertyFilter, attr: string, persons?: PersonsOfFilters): string {
  if (isPersonFilter(filter)) {
    const ids = persons?.get(filter)
    if (!ids) return unsupported(`${filter.type} filters are not supported here`, attr)
    return ids.length === 0 ? '1 = 0' : `person_id IN (${ids.map(str).join(', ')})`
  }
  const column = userProp(String(filter.key), `${attr}__key`)
  const operator = filter.operator ?? 'exact'
  const list = values(filter.value)
  const needsValue = () => {
    if (list.length === 0) unsupported(`The "${operator}" filter on "${String(filter.key).slice(0, 64)}" needs a value`, attr)
  }
  switch (operator) {
    case 'exact':
      needsValue()
      return list.length === 1 ? `${column} = ${literal(list[0])}` : `${column} IN (${list.map(literal).join(', ')})`
    case 'is_not':
      needsValue()
      return `${column} IS NULL OR ${column} NOT IN (${list.map(literal).join(', ')})`
    case 'icontains':
      needsValue()
      return list.map((v) => `toString(${column}) ILIKE ${str(`%${likeEscaped(String(v))}%`)}`).join(' OR ')
    case 'not_icontains':
      needsValue()
      return `${column} IS NULL OR NOT (${list.map((v) => `toString(${column}) ILIKE ${str(`%${likeEscaped(String(v))}%`)}`).join(' OR ')})`
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      needsValue()
      const n = Number(list[0])
      if (!Number.isFinite(n)) unsupported(`The "${operator}" filter needs a number`, attr)
      const op = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[operator]
      return `toFloat(${column}) ${op} ${n}`
    }
    case 'regex':
    case 'not_regex': {
      // HogQL's match() (RE2 on ClickHouse and DuckDB; the SQLite store refuses it by name)
      needsValue()
      const any = list.map((v) => `match(toString(${column}), ${str(checkedRegex(String(v), `${attr}__value`))})`).join(' OR ')
      return operator === 'regex' ? any : `${column} IS NULL OR NOT (${any})`
    }
    case 'is_set':
      return `${column} IS NOT NULL`
    case 'is_not_set':
      return `${column} IS NULL`
    case 'is_date_before':
      return `toDateTime(${column}) < ${dateOf(filter.value, attr)}`
    case 'is_date_after':
      return `toDateTime(${column}) > ${dateOf(filter.value, attr)}`
    default:
      return unsupported(`The "${operator}" operator is not supported by insights yet`, attr)
  }
}

/** A node's `properties` (a list: all must hold; or PostHog's AND/OR groups) as one condition; null when empty. */
export function propertiesCondition(input: PropertiesInput, attr: string, persons?: PersonsOfFilters): string | null {
  if (input === null || input === undefined) return null
  if (Array.isArray(input)) return input.length === 0 ? null : and(input.map((f, i) => propertyCondition(f, `${attr}__${i}`, persons)))
  const parts = input.values.map((value, i) => {
    if ('key' in value) return propertyCondition(value, `${attr}__values__${i}`, persons)
    const inner = value.values.map((f, j) => `(${propertyCondition(f, `${attr}__values__${i}__values__${j}`, persons)})`)
    return inner.length === 0 ? null : inner.join(value.type === 'OR' ? ' OR ' : ' AND ')
  })
  const present = parts.filter((p): p is string => p !== null)
  if (present.length === 0) return null
  return present.map((p) => `(${p})`).join(input.type === 'OR' ? ' OR ' : ' AND ')
}

/** Person and cohort filters one insight query may carry (all of them resolved in one scan of the project's persons). */
export const MAX_PERSON_FILTERS = 20

/**
 * Every person or cohort filter anywhere in a query node (its `properties`, each series', a funnel's exclusions'…),
 * with the `attr` its runner names it by; counted before anything runs, resolved together in one scan.
 */
export function personFiltersOfNode(node: unknown, attr = 'query'): PersonFilterAt[] {
  const found: PersonFilterAt[] = []
  const walk = (value: unknown, at: string): void => {
    if (Array.isArray(value)) return value.forEach((item, i) => walk(item, `${at}__${i}`))
    if (value === null || typeof value !== 'object') return
    for (const [key, member] of Object.entries(value)) {
      if (key === 'properties' && Value.Check(Properties, member)) found.push(...personFilters(member as PropertiesInput, `${at}__properties`))
      else walk(member, `${at}__${key}`)
    }
  }
  walk(node, attr)
  return found
}
