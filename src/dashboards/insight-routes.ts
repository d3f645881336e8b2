// /api/projects/:project_id/insights/ — list, create, retrieve (?refresh computes), PATCH (delete = PATCH
// {"deleted": true}: DELETE, not served, is 405 as PostHog answers it). Documented in docs/dashboards.md.
import { Elysia, t } from 'elysia'
import { errors } from '../http/errors'
import { documentedAs } from '../http/openapi'
import { LIST_PAGE_MAX_BYTES, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import type { Offload } from '../http/offload'
import type { RateLimiter } from '../http/rate-limit'
import { booleanParam } from '../definitions/rules'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import { projectContext } from './insight-service'
import type { dashboardOperations } from './operations'
import { Insight, InsightPage, InsightWrite } from './model'
import { DASHBOARD_LIMITS, idList, refreshMode } from './validation'

export interface InsightRouteDeps {
  offload: Offload<typeof dashboardOperations>
  auth: PersonalKeyAuth
  limiter?: RateLimiter
  trustProxy: boolean
}

const MAX_SEARCH_LENGTH = 200

/** `search` of a list: NULs dropped, at most 200 characters. */
export function searchParam(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined
  if (raw.length > MAX_SEARCH_LENGTH) throw errors.validation('max_length', `search may have at most ${MAX_SEARCH_LENGTH} characters.`, 'search')
  return raw.replace(/\0/g, '')
}

/** `dashboards` of the insights list: a JSON list of ids (PostHog's form) or ids separated by commas. */
function dashboardsParam(raw: string | undefined): number[] | undefined {
  if (raw === undefined || raw === '') return undefined
  if (raw.length > 2000) throw errors.validation('max_length', 'dashboards names too many ids.', 'dashboards')
  let value: unknown
  try {
    value = raw.trim().startsWith('[') ? JSON.parse(raw) : raw.split(',').map((s) => Number(s.trim()))
  } catch {
    throw errors.validation('invalid_input', 'dashboards must be a list of ids, e.g. [1,2].', 'dashboards')
  }
  return idList(value, 'dashboards', DASHBOARD_LIMITS.tilesPerDashboard)
}

function shortIdParam(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined
  if (!/^[A-Za-z0-9]{1,12}$/.test(raw)) throw errors.validation('invalid_input', 'A short id is at most 12 letters and digits.', 'short_id')
  return raw
}

export function insightRoutes(deps: InsightRouteDeps) {
  const base = '/api/projects/:project_id/insights'
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const idParams = t.Object({ project_id: t.String(), id: t.String() })
  const refreshQuery = t.Object({
    refresh: t.Optional(t.String({ description: 'true or force_blocking: compute now; blocking: compute if the stored result is older than 15 minutes; false or force_cache (default): the stored result' })),
  })
  const tags = ['insights']

  return new Elysia({ name: 'saved-insights' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      ({ project, query, request }) => {
        const { limit, offset } = parsePaging(query)
        const options = {
          limit,
          offset,
          search: searchParam(query.search),
          saved: booleanParam(query.saved, 'saved'),
          favorited: booleanParam(query.favorited, 'favorited'),
          shortId: shortIdParam(query.short_id),
          dashboards: dashboardsParam(query.dashboards),
          basic: booleanParam(query.basic, 'basic') === true,
          maxBytes: LIST_PAGE_MAX_BYTES,
        }
        return deps.offload('insights.list', [projectContext(project), options, publicUrl(request, deps.trustProxy).toString()], { request })
      },
      {
        params,
        query: t.Object({
          ...PageQuery,
          search: t.Optional(t.String({ description: 'case-insensitive part of the name, derived name or description' })),
          saved: t.Optional(t.String()),
          favorited: t.Optional(t.String()),
          short_id: t.Optional(t.String()),
          dashboards: t.Optional(t.String({ description: 'insights on every one of these dashboards: [1,2]' })),
          basic: t.Optional(t.String({ description: 'true: leave the stored results out' })),
        }),
        response: { 200: InsightPage },
        detail: { tags, summary: 'List insights (not deleted), last modified first, with their stored results (8 MiB a page at most)' },
      },
    )
    .post(
      `${base}/`,
      ({ principal, project, body }) => deps.offload('insights.create', [projectContext(project), principal.userId, body], { status: 201 }),
      { params, body: documentedAs(InsightWrite), response: { 201: Insight }, detail: { tags, summary: 'Create an insight' } },
    )
    .get(`${base}/:id/`, ({ project, params, query, request }) => deps.offload('insights.retrieve', [projectContext(project), params.id, refreshMode(query.refresh)], { request }), {
      params: idParams,
      query: refreshQuery,
      response: { 200: Insight },
      detail: { tags, summary: 'Retrieve an insight (deleted ones too); ?refresh=true computes its result' },
    })
    .patch(`${base}/:id/`, ({ principal, project, params, body }) => deps.offload('insights.update', [projectContext(project), params.id, principal.userId, body]), {
      params: idParams,
      body: documentedAs(InsightWrite),
      response: { 200: Insight },
      detail: { tags, summary: 'Update an insight; {"deleted": true} deletes it; "dashboards" is the list of dashboards it is on' },
    })
}
