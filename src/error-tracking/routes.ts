// /api/projects/:project_id/error_tracking/issues/ — list (occurrences, users, sessions and a daily volume over
// ?date_from/?date_to, ?status, ?order_by, paging), GET one (with its latest events), PATCH status / assignee, POST
// …/:id/merge/ {ids} and …/:id/split/ {fingerprints}. Scopes error_tracking:read / :write. Reads count events on an
// analytics thread (operations.ts); writes are Postgres only.
import { Elysia, t } from 'elysia'
import { parseTimestamp } from '../capture/timestamp'
import { errors } from '../http/errors'
import type { Offload } from '../http/offload'
import { documentedAnswer, documentedAs } from '../http/openapi'
import { PageQuery, parsePaging, publicUrl } from '../http/pagination'
import { untypedJsonBody as jsonBody } from '../http/parse'
import type { RateLimiter } from '../http/rate-limit'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import { IssueDetail, IssuePage, IssueRecord, IssueWrite, MergeAnswer, MergeBody, SplitAnswer, SplitBody } from './model'
import type { errorTrackingOperations } from './operations'
import { ISSUE_STATUSES, type Assignee, type IssueRow, type IssueStatus } from './repository'
import type { ErrorTrackingService, IssueListParams, IssueOrder } from './service'

export interface ErrorTrackingRouteDeps {
  errorTracking: ErrorTrackingService
  offload: Offload<typeof errorTrackingOperations>
  auth: PersonalKeyAuth
  limiter?: RateLimiter
  trustProxy: boolean
}

const DAY = 86_400_000
/** issues per page (each page counts its issues' daily volumes) */
const MAX_ISSUES_PAGE = 100
/** ids or fingerprints in one merge or split */
const MAX_IDS = 100
const MAX_EVENTS = 100
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const ORDERS: readonly IssueOrder[] = ['last_seen', 'first_seen', 'occurrences', 'users', 'sessions']

const invalid = (attr: string, detail: string) => errors.validation('invalid_input', detail, attr)
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** ISO 8601, or PostHog's relative -7d, -24h, -2w, -1m. */
function timeParam(raw: string | undefined, name: string, fallback: number): number {
  if (raw === undefined || raw === '') return fallback
  const relative = /^-(\d{1,5})([hdwm])$/.exec(raw)
  if (relative) return Date.now() - Number(relative[1]) * { h: 3_600_000, d: DAY, w: 7 * DAY, m: 30 * DAY }[relative[2] as 'h' | 'd' | 'w' | 'm']
  const ms = parseTimestamp(raw.slice(0, 64))
  if (ms === null) throw invalid(name, `Invalid datetime for ${name}: expected ISO 8601 or -7d.`)
  return ms
}

function rangeOf(query: { date_from?: string; date_to?: string }): { dateFrom: number; dateTo: number } {
  // a minute ahead by default: events stamped by a clock slightly fast are counted
  const dateTo = timeParam(query.date_to, 'date_to', Date.now() + 60_000)
  const dateFrom = timeParam(query.date_from, 'date_from', dateTo - 7 * DAY)
  if (!(dateFrom < dateTo)) throw invalid('date_from', 'date_from must be before date_to.')
  return { dateFrom, dateTo }
}

function statusesOf(raw: string | undefined): IssueStatus[] {
  if (raw === undefined || raw === '') return ['active', 'resolved']
  if (raw === 'all') return [...ISSUE_STATUSES]
  const given = raw.split(',').map((s) => s.trim())
  for (const s of given) if (!ISSUE_STATUSES.includes(s as IssueStatus)) throw errors.validation('invalid_choice', `"${s.slice(0, 40)}" is not a valid choice: active, resolved, suppressed or all.`, 'status')
  return given as IssueStatus[]
}

function orderOf(raw: string | undefined): IssueOrder {
  if (raw === undefined || raw === '') return 'last_seen'
  const order = raw.replace(/^-/, '') as IssueOrder
  if (!ORDERS.includes(order)) throw errors.validation('invalid_choice', `order_by must be one of ${ORDERS.join(', ')}.`, 'order_by')
  return order
}

/** An id that cannot be an issue's is not looked for (404, as another project's). */
function issueId(raw: string): string {
  if (!UUID.test(raw)) throw errors.notFound('Issue not found.')
  return raw.toLowerCase()
}

function assigneeOf(v: unknown): Assignee | null {
  if (v === null) return null
  if (!isObject(v) || v.type !== 'user' || typeof v.id !== 'number' || !Number.isSafeInteger(v.id)) throw invalid('assignee', 'assignee must be {"type": "user", "id": <user id>} or null.')
  return { type: 'user', id: v.id }
}

function changesOf(body: unknown) {
  if (!isObject(body)) throw invalid('body', 'Expected a JSON object.')
  const changes: { status?: IssueStatus; assignee?: Assignee | null; name?: string; description?: string } = {}
  for (const key of Object.keys(body)) {
    const v = body[key]
    if (key === 'status') {
      if (!ISSUE_STATUSES.includes(v as IssueStatus)) throw errors.validation('invalid_choice', 'status must be active, resolved or suppressed.', 'status')
      changes.status = v as IssueStatus
    } else if (key === 'assignee') changes.assignee = assigneeOf(v)
    else if (key === 'name' || key === 'description') {
      const max = key === 'name' ? 2048 : 4096
      if (typeof v !== 'string' || v.length > max || v.includes('\0')) throw invalid(key, `${key} must be text of at most ${max} characters.`)
      changes[key] = v
    } else if (!['id', 'first_seen', 'last_seen', 'created_at', 'aggregations'].includes(key)) {
      throw invalid(key.slice(0, 100), `Unknown field "${key.slice(0, 100)}": status, assignee, name and description can be changed.`)
    }
  }
  return changes
}

function listOf(body: unknown, key: string, check: (v: string) => boolean, what: string): string[] {
  const list = isObject(body) ? body[key] : undefined
  if (!Array.isArray(list)) throw invalid(key, `${key} must be a list.`)
  if (list.length === 0 || list.length > MAX_IDS) throw invalid(key, `${key} must hold 1 to ${MAX_IDS} ${what}.`)
  for (const v of list) if (typeof v !== 'string' || !check(v)) throw invalid(key, `${key} must hold ${what}.`)
  return [...new Set(list as string[])]
}

const recordOf = (r: IssueRow) => ({
  id: r.id,
  name: r.name,
  description: r.description,
  status: r.status,
  assignee: r.assignee,
  first_seen: r.firstSeen?.toISOString() ?? null,
  last_seen: r.lastSeen?.toISOString() ?? null,
  created_at: r.createdAt.toISOString(),
})

export function errorTrackingRoutes(deps: ErrorTrackingRouteDeps) {
  const base = '/api/projects/:project_id/error_tracking/issues'
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const idParams = t.Object({ project_id: t.String(), id: t.String() })
  const tags = ['error tracking']
  const range = {
    date_from: t.Optional(t.String({ description: 'ISO 8601 or relative (-7d, the default; -24h, -2w, -1m)' })),
    date_to: t.Optional(t.String({ description: 'ISO 8601 or relative (default: now)' })),
  }
  return new Elysia({ name: 'error-tracking' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      ({ project, query, request }) => {
        const { limit, offset } = parsePaging(query, 50)
        const params: IssueListParams = { ...rangeOf(query), statuses: statusesOf(query.status), orderBy: orderOf(query.order_by), limit: Math.min(limit, MAX_ISSUES_PAGE), offset }
        return deps.offload('errorTracking.list', [project.id, params, publicUrl(request, deps.trustProxy).toString()], { request })
      },
      {
        params,
        query: t.Object({
          ...PageQuery,
          ...range,
          status: t.Optional(t.String({ description: 'active, resolved, suppressed (comma-separated) or all; default active,resolved' })),
          order_by: t.Optional(t.String({ description: 'last_seen (default), first_seen, occurrences, users or sessions; always descending' })),
        }),
        detail: { tags, summary: 'Issues seen in the range with their occurrences, users, sessions and daily volume', responses: documentedAnswer(IssuePage) },
      },
    )
    .get(
      `${base}/:id/`,
      ({ project, params, query, request }) => {
        const limit = query.events_limit === undefined || query.events_limit === '' ? 20 : Number(query.events_limit)
        if (!Number.isInteger(limit) || limit < 0 || limit > MAX_EVENTS) throw invalid('events_limit', `events_limit must be 0 to ${MAX_EVENTS}.`)
        return deps.offload('errorTracking.get', [project.id, issueId(params.id), rangeOf(query), limit], { request })
      },
      {
        params: idParams,
        query: t.Object({ ...range, events_limit: t.Optional(t.String({ description: 'latest events returned, 0–100 (default 20)' })) }),
        detail: { tags, summary: 'One issue: its counts over the range, its fingerprints and its latest events (with their stacks)', responses: documentedAnswer(IssueDetail) },
      },
    )
    .patch(
      `${base}/:id/`,
      async ({ project, params, body }) => recordOf(await deps.errorTracking.update(project.id, issueId(params.id), changesOf(jsonBody(body)))),
      {
        params: idParams,
        body: documentedAs(IssueWrite),
        detail: { tags, summary: 'Change an issue: status (active, resolved, suppressed), assignee, name, description', responses: documentedAnswer(IssueRecord) },
      },
    )
    .post(
      `${base}/:id/merge/`,
      ({ project, params, body }) => deps.errorTracking.merge(project.id, issueId(params.id), listOf(jsonBody(body), 'ids', (v) => UUID.test(v), 'issue ids').map((v) => v.toLowerCase())),
      {
        params: idParams,
        body: documentedAs(MergeBody),
        detail: { tags, summary: "Merge issues into this one: their fingerprints (and so their past events) move here, they are deleted", responses: documentedAnswer(MergeAnswer) },
      },
    )
    .post(
      `${base}/:id/split/`,
      ({ project, params, body }) => deps.errorTracking.split(project.id, issueId(params.id), listOf(jsonBody(body), 'fingerprints', (v) => v.length > 0 && v.length <= 256, 'fingerprints of this issue')),
      {
        params: idParams,
        body: documentedAs(SplitBody),
        detail: { tags, summary: 'Split fingerprints off this issue, each to a new issue (its past events follow)', responses: documentedAnswer(SplitAnswer) },
      },
    )
}

