// The recordings API: GET /api/projects/:id/session_recordings/ (PostHog's list), GET and DELETE …/:session_id/,
// GET …/:session_id/snapshots (the sources, then ?source=blob_v2&start_blob_key=&end_blob_key= as JSON lines).
// Scopes session_recording:read / :write. Everything is read on an analytics thread (operations.ts).
import { Elysia, t } from 'elysia'
import { parseTimestamp } from '../capture/timestamp'
import { errors } from '../http/errors'
import type { Offload } from '../http/offload'
import { documentedAnswer } from '../http/openapi'
import { parsePaging } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import { validSessionId } from './decode'
import { SessionRecording, SessionRecordingPage, SnapshotSources } from './model'
import type { replayOperations } from './operations'
import type { RecordingFilter } from './service'

const MAX_FILTER_CHARS = 1000

function timeParam(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined || raw === '') return undefined
  // PostHog's relative dates: -7d, -24h
  const relative = /^-(\d{1,5})([hdwm])$/.exec(raw)
  if (relative) {
    const unit = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, m: 30 * 86_400_000 }[relative[2] as 'h' | 'd' | 'w' | 'm']
    return Date.now() - Number(relative[1]) * unit
  }
  const ms = parseTimestamp(raw)
  if (ms === null) throw errors.validation('invalid_input', `Invalid datetime for ${name}: expected ISO 8601 or -7d.`, name)
  return ms
}

function textParam(raw: string | undefined, name: string): string | undefined {
  if (raw === undefined || raw === '') return undefined
  if (raw.length > MAX_FILTER_CHARS) throw errors.validation('invalid_input', `${name} is longer than ${MAX_FILTER_CHARS} characters.`, name)
  return raw
}

function blobKey(raw: string | undefined, name: string): number {
  if (raw === undefined || !/^\d{1,9}$/.test(raw)) throw errors.validation('invalid_input', `${name} must be a block index (0, 1, …).`, name)
  return Number(raw)
}

/** A session id that cannot have been stored is not looked for (404, as for another project's). */
function sessionIdOf(raw: string): string {
  if (!validSessionId(raw)) throw errors.notFound('Recording not found.')
  return raw
}

export function recordingRoutes(deps: { offload: Offload<typeof replayOperations>; auth: PersonalKeyAuth; limiter?: RateLimiter }) {
  const params = t.Object({ project_id: t.String(), session_id: t.String() })
  return new Elysia({ name: 'recordings-api' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      '/api/projects/:project_id/session_recordings/',
      ({ project, query, request }) => {
        const { limit, offset } = parsePaging({ limit: query.limit, offset: query.offset }, 50)
        const duration = query.duration_min ?? query.min_duration
        if (duration !== undefined && duration !== '' && !/^\d{1,9}$/.test(duration)) throw errors.validation('invalid_input', 'duration_min must be whole seconds.', 'duration_min')
        const filter: RecordingFilter = {
          personUuid: textParam(query.person_uuid, 'person_uuid'),
          distinctId: textParam(query.distinct_id, 'distinct_id'),
          dateFrom: timeParam(query.date_from, 'date_from'),
          dateTo: timeParam(query.date_to, 'date_to'),
          minDurationSeconds: duration ? Number(duration) : undefined,
          urlContains: textParam(query.url, 'url'),
        }
        return deps.offload('recordings.list', [project.id, filter, limit, offset], { request })
      },
      {
        params: t.Object({ project_id: t.String() }),
        query: t.Object({
          person_uuid: t.Optional(t.String({ description: "only this person's recordings" })),
          distinct_id: t.Optional(t.String({ description: 'only recordings of this distinct id' })),
          date_from: t.Optional(t.String({ description: 'started at or after (ISO 8601, or -7d)' })),
          date_to: t.Optional(t.String({ description: 'started before (ISO 8601, or -1d)' })),
          duration_min: t.Optional(t.String({ description: 'at least this many seconds long' })),
          min_duration: t.Optional(t.String({ description: 'the same as duration_min' })),
          url: t.Optional(t.String({ description: 'the first URL contains this text' })),
          limit: t.Optional(t.String({ description: 'page size, 1–1000 (default 50)' })),
          offset: t.Optional(t.String()),
        }),
        detail: { tags: ['session recordings'], summary: 'Session recordings, newest first', responses: documentedAnswer(SessionRecordingPage) },
      },
    )
    .get(
      '/api/projects/:project_id/session_recordings/:session_id/',
      ({ project, params, request }) => deps.offload('recordings.get', [project.id, sessionIdOf(params.session_id)], { request }),
      { params, detail: { tags: ['session recordings'], summary: 'One session recording', responses: documentedAnswer(SessionRecording) } },
    )
    .delete(
      '/api/projects/:project_id/session_recordings/:session_id/',
      async ({ project, params, request, set }) => {
        await deps.offload('recordings.delete', [project.id, sessionIdOf(params.session_id)], { request })
        set.status = 204
        return ''
      },
      { params, detail: { tags: ['session recordings'], summary: 'Delete a session recording (its blocks and metadata)', responses: { 204: { description: 'deleted' } } } },
    )
    .get(
      '/api/projects/:project_id/session_recordings/:session_id/snapshots',
      ({ project, params, query, request }) => {
        const sessionId = sessionIdOf(params.session_id)
        if (query.source === undefined || query.source === '') return deps.offload('recordings.sources', [project.id, sessionId], { request })
        if (query.source !== 'blob_v2') throw errors.validation('invalid_input', 'source must be blob_v2.', 'source')
        const start = blobKey(query.start_blob_key ?? query.blob_key, 'start_blob_key')
        const end = query.end_blob_key === undefined ? start : blobKey(query.end_blob_key, 'end_blob_key')
        return deps.offload('recordings.snapshots', [project.id, sessionId, start, end], { request })
      },
      {
        params,
        query: t.Object({
          source: t.Optional(t.String({ description: 'absent: the sources; blob_v2: the blocks as JSON lines [windowId, event]' })),
          start_blob_key: t.Optional(t.String()),
          end_blob_key: t.Optional(t.String()),
          blob_key: t.Optional(t.String()),
          decompress: t.Optional(t.String({ description: 'ignored: blocks are always sent decompressed' })),
        }),
        detail: { tags: ['session recordings'], summary: "A recording's snapshot sources, or blocks of it as JSON lines", responses: documentedAnswer(SnapshotSources) },
      },
    )
}
