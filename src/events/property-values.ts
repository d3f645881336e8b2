// The most frequent recent values of one event property, for the console's value suggestions (PostHog's
// `events/values`). Run as HogQL through the query layer, so the tenant condition, the dialect and the query budgets
// (time, result bytes, slots) apply; every value a user sent enters the text only as a quoted literal.
import { errors } from '../http/errors'
import type { Metrics } from '../ops/metrics'
import { and, isEvent, likeEscaped, str, userProp } from '../lib/hogql-text'

/** Bounds of one request (docs/limits.md). */
export const PROPERTY_VALUE_LIMITS = {
  keyChars: 400,
  prefixChars: 200,
  eventNameChars: 400,
  valueChars: 200,
  values: 50,
  windowDays: 7,
} as const

export interface PropertyValueRequest {
  key: string
  /** a substring the values must contain (case-insensitive) */
  value?: string
  /** only the events of this name */
  eventName?: string
}

function bounded(text: string | undefined, max: number, attr: string): string | undefined {
  if (text !== undefined && text.length > max) throw errors.validation('max_length', `${attr} is longer than ${max} characters.`, attr)
  return text === '' ? undefined : text
}

/** The HogQL text of a request, after its bounds are checked (refused 400 naming the field at fault). */
export function propertyValuesQuery(request: PropertyValueRequest): string {
  const key = bounded(request.key, PROPERTY_VALUE_LIMITS.keyChars, 'key')
  if (key === undefined) throw errors.validation('required', 'key is required: the property whose values to suggest.', 'key')
  const contains = bounded(request.value, PROPERTY_VALUE_LIMITS.prefixChars, 'value')
  const eventName = bounded(request.eventName, PROPERTY_VALUE_LIMITS.eventNameChars, 'event_name')
  const column = userProp(key, 'key')
  // cut in the store, so that grouping, transfer and the answer all see at most valueChars characters a value
  const value = `substring(toString(${column}), 1, ${PROPERTY_VALUE_LIMITS.valueChars})`
  const where = and([
    `timestamp > now() - INTERVAL ${PROPERTY_VALUE_LIMITS.windowDays} DAY`,
    `${column} IS NOT NULL`,
    isEvent(eventName),
    contains === undefined ? null : `${value} ILIKE ${str(`%${likeEscaped(contains)}%`)}`,
  ])
  return `SELECT ${value} AS v, count() AS n FROM events WHERE ${where} GROUP BY v ORDER BY n DESC, v ASC LIMIT ${PROPERTY_VALUE_LIMITS.values}`
}

/** The query layer's HogQL runner (src/query's QueryService), named by its shape: the query layer reads events/. */
export interface HogQLRunner {
  run(teamId: number, text: string, signal?: AbortSignal): Promise<{ results: unknown[][] }>
}

export class PropertyValueService {
  constructor(
    private readonly query: HogQLRunner,
    private readonly metrics?: Pick<Metrics, 'propertyValueRequests'>,
  ) {}

  /** The values, most frequent first (then alphabetical), as `{name}` objects. */
  async values(teamId: number, request: PropertyValueRequest, signal?: AbortSignal): Promise<{ name: string }[]> {
    let text: string
    try {
      text = propertyValuesQuery(request)
    } catch (error) {
      this.metrics?.propertyValueRequests.inc({ outcome: 'refused' })
      throw error
    }
    try {
      const answer = await this.query.run(teamId, text, signal)
      this.metrics?.propertyValueRequests.inc({ outcome: 'ok' })
      return answer.results
        .slice(0, PROPERTY_VALUE_LIMITS.values)
        .map(([v]) => ({ name: String(v ?? '').slice(0, PROPERTY_VALUE_LIMITS.valueChars) }))
    } catch (error) {
      this.metrics?.propertyValueRequests.inc({ outcome: 'failed' })
      throw error
    }
  }
}
