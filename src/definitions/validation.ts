// What the definitions API accepts: query parameters and request bodies, checked member by member so that
// each error names its attribute. Pure: the routes call these before the service runs.
import { parseTimestamp } from '../capture/timestamp'
import { errors } from '../http/errors'
import { charField } from '../http/fields'
import type { DefinitionChanges, EventType, OrderKey } from './repository'
import { normalizeTags } from './rules'

const ORDER_KEYS = new Set<OrderKey>(['name', 'last_seen_at', 'last_seen_at::date', 'created_at', 'created_at::date'])
const EVENT_TYPES: Record<string, EventType> = {
  event: 'event',
  all: 'event',
  action_event: 'event',
  event_custom: 'event_custom',
  event_posthog: 'event_posthog',
}
const PATCHABLE = new Set(['name', 'created_at', 'last_seen_at', 'tags', 'post_to_chat'])

/** `event_type`: event (also all, action_event), event_custom or event_posthog. */
export function parseEventType(value: string | undefined): EventType {
  const eventType = EVENT_TYPES[value ?? 'event']
  if (!eventType) throw errors.validation('invalid_input', 'Not a valid event type. Use one of: event, event_custom, event_posthog.', 'event_type')
  return eventType
}

/** `ordering`, repeated and/or comma-joined; unknown keys are ignored (as PostHog does). */
export function parseOrdering(values: string[]): { key: OrderKey; descending: boolean }[] {
  const out: { key: OrderKey; descending: boolean }[] = []
  for (const part of values.flatMap((v) => v.split(','))) {
    const trimmed = part.trim()
    const descending = trimmed.startsWith('-')
    const key = (descending ? trimmed.slice(1) : trimmed) as OrderKey
    if (ORDER_KEYS.has(key) && !out.some((o) => o.key === key)) out.push({ key, descending })
  }
  return out
}

// Dates Postgres and its driver give back as they were given: postgres.js reads years 1–99 as 19xx/20xx.
const EARLIEST_DATE_MS = Date.UTC(1900, 0, 1)
const LATEST_DATE_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)
const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})/

function dateMember(value: unknown, attr: string): Date | null {
  if (value === null) return null
  const ms = typeof value === 'string' ? parseTimestamp(value) : null
  if (ms === null) throw errors.validation('invalid', 'Datetime has wrong format. Use ISO 8601.', attr)
  // 2024-02-30 is not 2024-03-01: a day the month does not have is refused, not rolled over
  const calendar = CALENDAR_DATE.exec((value as string).trim())
  if (calendar) {
    const [, y, m, d] = calendar.map(Number) as [number, number, number, number]
    const day = new Date(Date.UTC(2000, 0, 1))
    day.setUTCFullYear(y, m - 1, d)
    if (day.getUTCMonth() !== m - 1 || day.getUTCDate() !== d) throw errors.validation('invalid', 'Datetime has wrong format. Use ISO 8601.', attr)
  }
  if (ms < EARLIEST_DATE_MS || ms > LATEST_DATE_MS) {
    throw errors.validation('invalid', 'Datetime out of range: use a date between 1900-01-01 and 9999-12-31.', attr)
  }
  return new Date(ms)
}

/** A PATCH body of an event definition, checked member by member. */
export function parseEventChanges(body: unknown): DefinitionChanges {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw errors.validation('parse_error', 'Expected a JSON object.')
  }
  const changes: DefinitionChanges = {}
  for (const [key, value] of Object.entries(body)) {
    if (!PATCHABLE.has(key)) throw errors.validation('invalid_input', `Unknown field "${key}": only name, created_at, last_seen_at, tags and post_to_chat can be changed.`, key)
    if (key === 'name') {
      changes.name = charField(value, 'name', { allowBlank: false, maxLength: 400 })
    } else if (key === 'created_at' || key === 'last_seen_at') {
      changes[key] = dateMember(value, key)
    } else if (key === 'tags') {
      changes.tags = normalizeTags(value)
    } else if (key === 'post_to_chat') {
      if (typeof value !== 'boolean') throw errors.validation('invalid', 'Must be a valid boolean.', 'post_to_chat')
      changes.post_to_chat = value
    }
  }
  return changes
}
