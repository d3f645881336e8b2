// /api/projects/:project_id/dashboards/ — list, create, retrieve with tiles (?refresh recomputes them), PATCH
// (tiles changed or removed by id; delete = PATCH {"deleted": true}: DELETE, not served, is 405). Documented in docs/dashboards.md.
import { Elysia, t } from 'elysia'
import { documentedAs } from '../http/openapi'
import { PageQuery, parsePaging, publicUrl } from '../http/pagination'
import type { Offload } from '../http/offload'
import type { RateLimiter } from '../http/rate-limit'
import { booleanParam } from '../definitions/rules'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import { projectContext } from './insight-service'
import type { dashboardOperations } from './operations'
import { searchParam } from './insight-routes'
import { Dashboard, DashboardPage, DashboardWrite } from './model'
import { refreshMode } from './validation'

export interface DashboardRouteDeps {
  offload: Offload<typeof dashboardOperations>
  auth: PersonalKeyAuth
  limiter?: RateLimiter
  trustProxy: boolean
}

export function dashboardRoutes(deps: DashboardRouteDeps) {
  const base = '/api/projects/:project_id/dashboards'
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const idParams = t.Object({ project_id: t.String(), id: t.String() })
  const tags = ['dashboards']

  return new Elysia({ name: 'dashboards' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      ({ project, query, request }) => {
        const { limit, offset } = parsePaging(query)
        const options = { limit, offset, search: searchParam(query.search), pinned: booleanParam(query.pinned, 'pinned') }
        return deps.offload('dashboards.list', [projectContext(project), options, publicUrl(request, deps.trustProxy).toString()], { request })
      },
      {
        params,
        query: t.Object({ ...PageQuery, search: t.Optional(t.String({ description: 'case-insensitive part of the name or description' })), pinned: t.Optional(t.String()) }),
        response: { 200: DashboardPage },
        detail: { tags, summary: 'List dashboards (not deleted), pinned first, then newest; without their tiles' },
      },
    )
    .post(
      `${base}/`,
      ({ principal, project, body }) => deps.offload('dashboards.create', [projectContext(project), principal.userId, body], { status: 201 }),
      { params, body: documentedAs(DashboardWrite), response: { 201: Dashboard }, detail: { tags, summary: 'Create a dashboard (empty: insights join it through their "dashboards")' } },
    )
    .get(`${base}/:id/`, ({ project, params, query, request }) => deps.offload('dashboards.retrieve', [projectContext(project), params.id, refreshMode(query.refresh)], { request }), {
      params: idParams,
      query: t.Object({ refresh: t.Optional(t.String({ description: 'true or force_blocking: recompute every tile; blocking: the stale ones; default: stored results' })) }),
      response: { 200: Dashboard },
      detail: { tags, summary: 'Retrieve a dashboard with its tiles; ?refresh=true recomputes them (two at a time; a failing tile carries its error)' },
    })
    .patch(`${base}/:id/`, ({ project, params, body }) => deps.offload('dashboards.update', [projectContext(project), params.id, body]), {
      params: idParams,
      body: documentedAs(DashboardWrite),
      response: { 200: Dashboard },
      detail: { tags, summary: 'Update a dashboard; {"deleted": true} deletes it; tiles: [{id, deleted: true}] takes an insight off it' },
    })
}
