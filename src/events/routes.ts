// GET /api/projects/:project_id/events/ — events as stored, newest first, with a cursor that continues
// the listing exactly (no event skipped or repeated, however many share a timestamp).
import { Elysia, t } from 'elysia'
import type { PersonalKeyAuth } from '../projects/auth'
import { errors } from '../http/errors'
import { projectGuard } from '../projects/guards'
import { parsePaging, publicUrl } from '../http/pagination'
import type { Offload } from '../http/offload'
import type { RateLimiter } from '../http/rate-limit'
import { parseTimestamp } from '../capture/timestamp'
import type { EventListFilter, eventOperations } from './operations'
import { documentedAnswer } from '../http/openapi'
import { EventPage } from './model'

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

export function eventRoutes(deps: { offload: Offload<typeof eventOperations>; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean }) {
  return new Elysia({ name: 'events-api' }).use(projectGuard(deps.auth, deps.limiter)).get(
    '/api/projects/:project_id/events/',
    ({ project, query, request }) => {
      // the same reading (and the same error codes) as every other list
      const { limit } = parsePaging({ limit: query.limit })
      const filter: EventListFilter = {
        teamId: project.id,
        event: query.event || undefined,
        distinctId: query.distinct_id || undefined,
        after: timeParam(query.after, 'after'),
        before: timeParam(query.before, 'before'),
        cursor: query.cursor ? decodeCursor(query.cursor) : undefined,
      }
      return deps.offload('events.list', [filter, limit, publicUrl(request, deps.trustProxy).toString()], { request })
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
