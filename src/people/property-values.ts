// The most frequent values of one person property, for the console's value suggestions in flag and cohort
// conditions (PostHog's `persons/values`). Read from the project's newest persons only (PERSONS_READ), so that one
// request costs the same whatever the project's size; the same bounds as the event property values.
import type { Sql } from 'postgres'
import { PROPERTY_VALUE_LIMITS } from '../events/property-values'
import { errors } from '../http/errors'
import { personPropertyValues } from './repository'

/** Persons a request reads at most (the newest). */
export const PERSONS_READ = 100_000

function bounded(text: string | undefined, max: number, attr: string): string | undefined {
  if (text !== undefined && text.length > max) throw errors.validation('max_length', `${attr} is longer than ${max} characters.`, attr)
  return text === '' ? undefined : text
}

/** `%`, `_` and `!` of a value matched literally inside an ILIKE pattern (escape character `!`). */
function likeEscaped(value: string): string {
  return value.replace(/[!%_]/g, (c) => `!${c}`)
}

export async function personValues(sql: Sql, teamId: number, request: { key?: string; value?: string }): Promise<{ name: string }[]> {
  const key = bounded(request.key, PROPERTY_VALUE_LIMITS.keyChars, 'key')
  if (key === undefined) throw errors.validation('required', 'key is required: the person property whose values to suggest.', 'key')
  if (/[\0]/.test(key)) throw errors.validation('invalid', 'key holds a NUL character.', 'key')
  const contains = bounded(request.value, PROPERTY_VALUE_LIMITS.prefixChars, 'value')
  const rows = await personPropertyValues(sql, teamId, {
    key,
    pattern: contains === undefined ? null : `%${likeEscaped(contains)}%`,
    valueChars: PROPERTY_VALUE_LIMITS.valueChars,
    values: PROPERTY_VALUE_LIMITS.values,
    personsRead: PERSONS_READ,
  })
  return rows.map((r) => ({ name: r.name }))
}
