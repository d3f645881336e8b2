// The events API's and the value suggestions' reads, run on the analytics thread (src/analytics/): the rows are read,
// parsed and encoded there, never on the thread that serves capture and /decide. The routes check the key and the
// filters and hand over plain arguments.
import { errors } from '../http/errors'
import { isoDate } from '../http/format'
import type { Operations } from '../http/offload'
import { LIST_PAGE_MAX_BYTES, rowsThatFit } from '../http/pagination'
import type { PropertyValueService } from './property-values'
import { StoreError, type EventQuery, type EventStore, type StoredEvent } from './store'

/** The events API page's byte budget (the same as every list's). */
export const EVENTS_PAGE_MAX_BYTES = LIST_PAGE_MAX_BYTES

export type EventListFilter = Omit<EventQuery, 'limit'>

interface EventServices {
  events: EventStore
  /** the person each distinct id belongs to now (the query API's mapping, src/query/) */
  personIds?: (teamId: number, distinctIds: string[]) => Promise<Map<string, string>>
  values: PropertyValueService
}

function encodeCursor(e: StoredEvent): string {
  return Buffer.from(JSON.stringify([e.timestamp, e.uuid])).toString('base64url')
}

export function eventJson(e: StoredEvent) {
  let properties: unknown
  try {
    properties = JSON.parse(e.properties)
  } catch {
    properties = {}
  }
  return {
    id: e.uuid,
    uuid: e.uuid,
    event: e.event,
    distinct_id: e.distinctId,
    properties,
    timestamp: isoDate(e.timestamp),
    person_id: e.personId,
  }
}

const unavailable = (error: unknown): never => {
  // the event store is down or starting: a 503 the client may retry, not a 500
  if (error instanceof StoreError && error.transient) throw errors.unavailable('event_store_unavailable', 'The event store is not reachable. Please retry shortly.')
  throw error
}

/** A page of events, newest first, within the page's byte budget; `next` continues it exactly. */
async function listEvents(s: EventServices, filter: EventListFilter, limit: number, url: string) {
  // sizes first (cheap), then only the rows that fit the page's byte budget
  const sizes = await s.events.rowSizes({ ...filter, limit: limit + 1 }).catch(unavailable)
  const fit = rowsThatFit(sizes, limit)
  const rows = fit === 0 ? [] : await s.events.query({ ...filter, limit: fit }).catch(unavailable)
  if (s.personIds && rows.length > 0) {
    const persons = await s.personIds(filter.teamId, [...new Set(rows.map((r) => r.distinctId))]).catch(() => null)
    for (const r of rows) r.personId = persons?.get(r.distinctId) ?? r.personId
  }
  let next: string | null = null
  if (sizes.length > fit && rows.length > 0) {
    const nextUrl = new URL(url)
    nextUrl.searchParams.set('cursor', encodeCursor(rows[rows.length - 1]!))
    nextUrl.searchParams.set('limit', String(limit))
    next = nextUrl.toString()
  }
  return { results: rows.map(eventJson), next }
}

export const eventOperations = {
  'events.list': (s: EventServices, [filter, limit, url]: [EventListFilter, number, string]) => listEvents(s, filter, limit, url),
  'events.values': (s: EventServices, [teamId, input]: [number, Parameters<PropertyValueService['values']>[1]], signal: AbortSignal) => s.values.values(teamId, input, signal),
} satisfies Operations<never>
