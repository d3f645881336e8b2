// HogQL text written from parts (insights, experiments, value suggestions): every value a user sent enters it only
// as a quoted literal, every property name only through `prop`/`userProp`. The text is then parsed, checked and
// compiled for the store like any HogQL query, with the tenant condition, the dialect and the budgets it brings.
import { errors } from '../http/errors'

/** A HogQL string literal: backslashes and quotes escaped, control characters written as escapes. */
export function str(value: string): string {
  return `'${value.replace(/[\\'\n\r\t\0]/g, (c) => ({ '\\': '\\\\', "'": "\\'", '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0' })[c]!)}'`
}

/** A literal of a filter value: numbers and booleans as themselves, anything else as a string. */
export function literal(value: unknown): string {
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  return str(typeof value === 'string' ? value : JSON.stringify(value))
}

/** An event property's value (`NULL` when absent). */
export function prop(key: string): string {
  return `properties[${str(key)}]`
}

/**
 * A property a user named, refused by `attr` when it holds what not every store can address (a double quote, a
 * backslash, a control character): the same answer on every store, instead of a failure on one.
 */
export function userProp(key: string, attr: string): string {
  if (/["\\\0-\x1f]/.test(key)) throw errors.validation('unsupported', `Property name ${JSON.stringify(key.slice(0, 100))} holds a quote, backslash or control character`, attr)
  return prop(key)
}

/** A UTC instant as a HogQL time literal. */
export function time(ms: number): string {
  return `toDateTime(${str(new Date(ms).toISOString())})`
}

/** The events of one named event, or every event (null). */
export function isEvent(event: string | null | undefined): string | null {
  return event === null || event === undefined ? null : `event = ${str(event)}`
}

/** AND of the conditions that are not null ('true' when none). */
export function and(conditions: (string | null | undefined)[]): string {
  const present = conditions.filter((c): c is string => typeof c === 'string' && c !== '')
  return present.length === 0 ? 'true' : present.map((c) => `(${c})`).join(' AND ')
}

/** `%`, `_` and `\` of a value matched literally inside a LIKE/ILIKE pattern. */
export function likeEscaped(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`)
}
