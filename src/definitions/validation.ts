// What the definitions API accepts: query parameters and request bodies, checked member by member so that
// each error names its attribute. Pure: the routes call these before the service runs.
import { parseTimestamp } from '../capture/timestamp'
import { errors } from '../http/errors'
import { charField } from '../http/fields'
import type { DefinitionChanges, EventType, OrderKey } from './repository'
import { booleanMember, descriptionMember, objectBody, tagsMember, type CurationChange } from './rules'

const ORDER_KEYS = new Set<OrderKey>(['name', 'last_seen_at', 'last_seen_at::date', 'created_at', 'created_at::date'])
const EVENT_TYPES: Record<string, EventType> = {
  event: 'event',
  all: 'event',
  action_event: 'event',
  event_custom: 'event_custom',
  event_posthog: 'event_posthog',
}

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

/** Members an answer carries that a write may send back unchanged: ignored, as PostHog ignores read-only fields. */
const EVENT_READ_ONLY = new Set([
  'id', 'last_updated_at', 'verified_at', 'verified_by', 'is_action', 'action_id', 'is_calculating', 'last_calculated_at', 'created_by',
])
const EVENT_WRITABLE = 'name, description, tags, verified, hidden, post_to_chat, created_at and last_seen_at'

export interface EventWrite {
  changes: DefinitionChanges
  curation: CurationChange
}

/** A PATCH (or PUT) body of an event definition, checked member by member. */
export function parseEventChanges(body: unknown): EventWrite {
  const changes: DefinitionChanges = {}
  const curation: CurationChange = {}
  for (const [key, value] of Object.entries(objectBody(body))) {
    if (EVENT_READ_ONLY.has(key)) continue
    if (key === 'name') changes.name = charField(value, 'name', { allowBlank: false, maxLength: 400 })
    else if (key === 'created_at' || key === 'last_seen_at') changes[key] = dateMember(value, key)
    else if (key === 'tags') changes.tags = tagsMember(value)
    else if (key === 'description') changes.description = descriptionMember(value)
    else if (key === 'verified' || key === 'hidden') curation[key] = booleanMember(value, key)
    else if (key === 'post_to_chat') changes.post_to_chat = booleanMember(value, key)
    else throw errors.validation('invalid_input', `Unknown field "${key}": only ${EVENT_WRITABLE} can be changed.`, key)
  }
  return { changes, curation }
}

export interface EventCreate {
  name: string
  description: string
  tags: string[]
  post_to_chat: boolean
  curation: CurationChange
}

/** A POST body: `name` required; created_at and last_seen_at are ignored (a new definition has not been seen). */
export function parseEventCreate(body: unknown): EventCreate {
  const b = objectBody(body)
  if (b.name === undefined) throw errors.validation('required', 'This field is required.', 'name')
  const { changes, curation } = parseEventChanges(Object.fromEntries(Object.entries(b).filter(([k]) => k !== 'created_at' && k !== 'last_seen_at')))
  return { name: changes.name!, description: changes.description ?? '', tags: changes.tags ?? [], post_to_chat: changes.post_to_chat ?? false, curation }
}
