// POST /api/projects/:project_id/query/ — HogQL over the project's events (docs/query.md).
import { Elysia, t } from 'elysia'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import type { RateLimiter } from '../http/rate-limit'
import { QueryRequest, QueryResponse } from './model'
import type { QueryService } from './service'

export function queryRoutes(deps: { query: QueryService; auth: PersonalKeyAuth; limiter?: RateLimiter }) {
  return new Elysia({ name: 'query-api' }).use(projectGuard(deps.auth, deps.limiter)).post(
    '/api/projects/:project_id/query/',
    ({ project, body, request }) => deps.query.run(project.id, body.query.query, request.signal),
    {
      params: t.Object({ project_id: t.String() }),
      body: QueryRequest,
      response: { 200: QueryResponse },
      detail: { tags: ['query'], summary: 'Run a HogQL query over the project’s events' },
    },
  )
}
