// GET /api/projects/:project_id/events/ — events as stored, newest first, with a cursor that continues
// the listing exactly (no event skipped or repeated, however many share a timestamp).
import { Elysia, t } from 'elysia'
import type { PersonalKeyAuth } from '../projects/auth'
import { errors } from '../http/errors'
import { isoDate } from '../http/format'
import { projectGuard } from '../projects/guards'
import { LIST_PAGE_MAX_BYTES, parsePaging, publicUrl, rowsThatFit } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import { parseTimestamp } from '../capture/timestamp'
import { StoreError, type EventStore, type StoredEvent } from './store'
import { documentedAnswer } from '../http/openapi'
import { EventPage } from './model'

function encodeCursor(e: StoredEvent): string {
  return Buffer.from(JSON.stringify([e.timestamp, e.uuid])).toString('base64url')
}

function decodeCursor(raw: string): { timestamp: number; uuid: string } {
  try {
    const [timestamp, uuid] = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as [number, string]
    if (typeof timestamp === 'number' && typeof uuid === 'string' && /^[0-9a-f-]{36}$/.test(uuid)) return { timestamp, uuid }
  } catch {
    // fall through
  }
  throw errors.validation('invalid_input', 'Invalid cursor.', 'cursor')
}

function timeParam(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined
  const ms = parseTimestamp(raw)
  if (ms === null) throw errors.validation('invalid_input', `Invalid datetime for ${name}: expected ISO 8601.`, name)
  return ms
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

/** The events API page's byte budget (the same as every list's). */
export const EVENTS_PAGE_MAX_BYTES = LIST_PAGE_MAX_BYTES

export function eventRoutes(deps: {
  events: EventStore
  auth: PersonalKeyAuth
  limiter?: RateLimiter
  trustProxy: boolean
  /** the person each distinct id belongs to now (the query API's mapping, src/query/) */
  personIds?: (teamId: number, distinctIds: string[]) => Promise<Map<string, string>>
}) {
  const unavailable = (error: unknown): never => {
    // the event store is down or starting: a 503 the client may retry, not a 500
    if (error instanceof StoreError && error.transient) throw errors.unavailable('event_store_unavailable', 'The event store is not reachable. Please retry shortly.')
    throw error
  }
  return new Elysia({ name: 'events-api' }).use(projectGuard(deps.auth, deps.limiter)).get(
    '/api/projects/:project_id/events/',
    async ({ project, params, query, request }) => {
      // the same reading (and the same error codes) as every other list
      const { limit } = parsePaging({ limit: query.limit })
      const filter = {
        teamId: project.id,
        event: query.event || undefined,
        distinctId: query.distinct_id || undefined,
        after: timeParam(query.after, 'after'),
        before: timeParam(query.before, 'before'),
        cursor: query.cursor ? decodeCursor(query.cursor) : undefined,
      }
      // sizes first (cheap), then only the rows that fit the page's byte budget
      const sizes = await deps.events.rowSizes({ ...filter, limit: limit + 1 }).catch(unavailable)
      const fit = rowsThatFit(sizes, limit)
      const rows = fit === 0 ? [] : await deps.events.query({ ...filter, limit: fit }).catch(unavailable)
      let next: string | null = null
      if (deps.personIds && rows.length > 0) {
        const persons = await deps.personIds(project.id, [...new Set(rows.map((r) => r.distinctId))]).catch(() => null)
        for (const r of rows) r.personId = persons?.get(r.distinctId) ?? r.personId
      }
      if (sizes.length > fit && rows.length > 0) {
        const url = publicUrl(request, deps.trustProxy)
        url.searchParams.set('cursor', encodeCursor(rows[rows.length - 1]))
        url.searchParams.set('limit', String(limit))
        next = url.toString()
      }
      return { results: rows.map(eventJson), next }
    },
    {
      params: t.Object({ project_id: t.String() }),
      query: t.Object({
        event: t.Optional(t.String({ description: 'only events with this name' })),
        distinct_id: t.Optional(t.String({ description: 'only events of this distinct id' })),
        after: t.Optional(t.String({ description: 'ISO 8601: at or after' })),
        before: t.Optional(t.String({ description: 'ISO 8601: before' })),
        limit: t.Optional(t.String({ description: 'page size, 1–1000 (default 100)' })),
        cursor: t.Optional(t.String({ description: 'continue a listing (from next)' })),
      }),
      detail: { tags: ['events'], summary: 'Events, newest first', responses: documentedAnswer(EventPage) },
    },
  )
}
