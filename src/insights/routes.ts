// POST /api/projects/:project_id/query/ — HogQL and PostHog's insight kinds over the project's events
// (docs/query.md, docs/insights.md).
import { Elysia, type Static } from 'elysia'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import type { RateLimiter } from '../http/rate-limit'
import { errors } from '../http/errors'
import type { Offload } from '../http/offload'
import { hasScope } from '../projects/scopes'
import type { queryOperations } from './operations'
import { QueryRequest, QueryResponse } from './query-model'

export function queryRoutes(deps: { offload: Offload<typeof queryOperations>; auth: PersonalKeyAuth; limiter?: RateLimiter }) {
  return new Elysia({ name: 'query-api' }).use(projectGuard(deps.auth, deps.limiter)).post(
    '/api/projects/:project_id/query/',
    ({ principal, project, body, request }) => {
      // an experiment's results are guarded by experiment:read on /experiments/:id/results/: the same here
      if ((body.query as { kind?: unknown }).kind === 'ExperimentQuery' && !hasScope(principal.scopes, 'experiment:read')) {
        throw errors.permissionDenied("API key missing required scope 'experiment:read'")
      }
      const context = { id: project.id, timezone: project.timezone, weekStartDay: project.weekStartDay }
      return deps.offload('query.run', [context, body.query, body.refresh], { request }) as Promise<Response & Static<typeof QueryResponse>>
    },
    {
      body: QueryRequest,
      response: { 200: QueryResponse },
      detail: { tags: ['query'], summary: 'Run a HogQL query or an insight (TrendsQuery, FunnelsQuery, RetentionQuery, LifecycleQuery, StickinessQuery, EventsQuery, WebOverviewQuery, WebStatsTableQuery, ExperimentQuery) over the project’s events' },
    },
  )
}
