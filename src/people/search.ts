// What the persons list can be narrowed by, as PostHog's persons API has it: `search` (a distinct id, exactly, or a
// part of the email) and `properties` (person-property filters, exact values). Both are bounded before they are
// decoded further or reach Postgres: a search term, a filter's key and value have lengths; the filters a count.
import { errors } from '../http/errors'
import { escapeLike } from '../definitions/rules'

export const PERSON_SEARCH_LIMITS = {
  /** characters of `search` */
  searchChars: 200,
  /** characters of the `properties` JSON as sent */
  propertiesChars: 4096,
  /** filters in `properties` */
  filters: 10,
  /** characters of a filter's key, and of each of its values */
  keyChars: 400,
  valueChars: 1000,
  /** values one filter may list (any of them matches) */
  values: 20,
}

export interface PersonPropertyFilter {
  key: string
  /** the person's property as text equals one of these */
  values: string[]
}

export function parseSearch(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  const term = raw.replace(/\0/g, '').trim()
  if (term.length > PERSON_SEARCH_LIMITS.searchChars) {
    throw errors.validation('max_length', `Ensure this field has no more than ${PERSON_SEARCH_LIMITS.searchChars} characters.`, 'search')
  }
  return term === '' ? undefined : term
}

/** The `%part%` an email is matched against (LIKE's wildcards in the term match themselves). */
export function emailPattern(term: string): string {
  return `%${escapeLike(term)}%`
}

const invalid = (detail: string) => errors.validation('invalid_input', detail, 'properties')

function valueText(value: unknown): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    const text = String(value)
    if (text.length > PERSON_SEARCH_LIMITS.valueChars) throw invalid(`A filter's value has at most ${PERSON_SEARCH_LIMITS.valueChars} characters.`)
    return text
  }
  throw invalid("A filter's value must be a string, a number, a boolean or a list of them.")
}

/** `properties=[{"key": "plan", "value": "pro", "operator": "exact", "type": "person"}]`, bounded. */
export function parsePropertyFilters(raw: string | undefined): PersonPropertyFilter[] {
  if (raw === undefined || raw.trim() === '') return []
  if (raw.length > PERSON_SEARCH_LIMITS.propertiesChars) throw invalid(`properties has at most ${PERSON_SEARCH_LIMITS.propertiesChars} characters.`)
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    throw invalid('properties must be a JSON list of filters.')
  }
  if (!Array.isArray(parsed)) throw invalid('properties must be a JSON list of filters.')
  if (parsed.length > PERSON_SEARCH_LIMITS.filters) throw invalid(`At most ${PERSON_SEARCH_LIMITS.filters} property filters.`)
  return parsed.map((filter) => {
    if (!filter || typeof filter !== 'object' || Array.isArray(filter)) throw invalid('Each filter is an object with a key and a value.')
    const { key, value, operator, type } = filter as Record<string, unknown>
    if (typeof key !== 'string' || key === '' || key.length > PERSON_SEARCH_LIMITS.keyChars) throw invalid(`A filter's key is a string of 1 to ${PERSON_SEARCH_LIMITS.keyChars} characters.`)
    if (operator !== undefined && operator !== 'exact') throw invalid('Only the exact operator filters the persons list.')
    if (type !== undefined && type !== 'person') throw invalid('Only person properties filter the persons list.')
    const values = Array.isArray(value) ? value : [value]
    if (values.length === 0 || values.length > PERSON_SEARCH_LIMITS.values) throw invalid(`A filter lists 1 to ${PERSON_SEARCH_LIMITS.values} values.`)
    return { key: key.replace(/\0/g, ''), values: values.map(valueText) }
  })
}
