// GET /api/projects/, /api/projects/@current/, /api/projects/:project_id/
import { Elysia, t } from 'elysia'
import type { Sql } from 'postgres'
import type { PersonalKeyAuth } from '../http/auth'
import { isoDate } from '../http/format'
import { personalKeyGuard } from '../http/guards'
import { page, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import { projectsOfUser, type ProjectRow } from './repository'

export function projectJson(p: ProjectRow) {
  return {
    id: p.id,
    uuid: p.uuid,
    organization: p.organizationId,
    name: p.name,
    // Keys are stored only as hashes: the API can show which key, never the key itself.
    api_token_hint: p.apiTokenMask,
    created_at: isoDate(p.createdAt),
  }
}

export function projectRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean }) {
  return new Elysia({ name: 'projects', detail: { tags: ['projects'] } as never })
    .use(personalKeyGuard(deps.auth, deps.limiter))
    .get(
      '/api/projects/',
      async ({ principal, query, request }) => {
        const { limit, offset } = parsePaging(query)
        const { count, rows } = await projectsOfUser(deps.sql, principal.userId, limit, offset)
        return page(publicUrl(request, deps.trustProxy), count, limit, offset, rows.map(projectJson))
      },
      { query: t.Object(PageQuery), detail: { summary: 'Projects the key’s user can see', tags: ['projects'] } },
    )
    .get(
      '/api/projects/:project_id/',
      async ({ principal, params }) => projectJson(await deps.auth.project(principal, params.project_id)),
      {
        params: t.Object({ project_id: t.String({ description: 'numeric id or @current' }) }),
        detail: { summary: 'One project', tags: ['projects'] },
      },
    )
}
