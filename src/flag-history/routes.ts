// GET /api/projects/:project_id/feature_flags/:id/activity/: a flag's change history (PostHog's path and shape).
import { Elysia, t } from 'elysia'
import type { Sql } from 'postgres'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import type { RateLimiter } from '../http/rate-limit'
import { pageLinks, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import { FlagChangePage } from './model'
import { FlagHistoryService } from './service'

export function flagHistoryRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean }) {
  const history = new FlagHistoryService(deps.sql)
  return new Elysia({ name: 'flag-history' }).use(projectGuard(deps.auth, deps.limiter)).get(
    '/api/projects/:project_id/feature_flags/:id/activity/',
    async ({ project, params, query, request }) => {
      const { limit, offset } = parsePaging(query, 50)
      const { rows, more } = await history.list(project.id, params.id, limit, offset)
      // no count: a page with one more row than asked has a next page
      const links = pageLinks(publicUrl(request, deps.trustProxy), more ? offset + limit + 1 : offset + rows.length, limit, offset)
      return { results: rows, next: links.next, previous: links.previous }
    },
    {
      params: t.Object({ project_id: t.String(), id: t.String({ maxLength: 20 }) }),
      query: t.Object(PageQuery),
      response: { 200: FlagChangePage },
      detail: { summary: 'A flag’s change history, newest first: who changed which fields, from what to what', tags: ['feature_flags'] },
    },
  )
}
