// POST /api/projects/:project_id/query/ — HogQL and PostHog's insight kinds over the project's events
// (docs/query.md, docs/insights.md).
import { Elysia, type Static } from 'elysia'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import type { RateLimiter } from '../http/rate-limit'
import { QueryRequest, QueryResponse } from './query-model'
import type { InsightsService } from './service'

export function queryRoutes(deps: { insights: InsightsService; auth: PersonalKeyAuth; limiter?: RateLimiter }) {
  return new Elysia({ name: 'query-api' }).use(projectGuard(deps.auth, deps.limiter)).post(
    '/api/projects/:project_id/query/',
    async ({ project, body, request }) =>
      (await deps.insights.run({ id: project.id, timezone: project.timezone, weekStartDay: project.weekStartDay }, body.query, { refresh: body.refresh, signal: request.signal })) as Static<typeof QueryResponse>,
    {
      body: QueryRequest,
      response: { 200: QueryResponse },
      detail: { tags: ['query'], summary: 'Run a HogQL query or an insight (TrendsQuery, FunnelsQuery, RetentionQuery, EventsQuery) over the project’s events' },
    },
  )
}
