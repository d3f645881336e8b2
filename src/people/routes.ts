// GET /api/projects/:project_id/persons/?distinct_id= — who ingestion says is who (personal key).
import { Elysia, t } from 'elysia'
import type { Sql } from 'postgres'
import type { PersonalKeyAuth } from '../projects/auth'
import { isoDate } from '../http/format'
import { projectGuard } from '../projects/guards'
import { page, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import { listPersons, type PersonListing } from './repository'
import { documentedAnswer } from '../http/openapi'
import { PersonPage } from './model'

export function personJson(p: PersonListing) {
  return {
    id: p.uuid,
    uuid: p.uuid,
    distinct_ids: p.distinct_ids,
    properties: p.properties,
    is_identified: p.is_identified,
    created_at: isoDate(p.created_at),
  }
}

export function personRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean }) {
  return new Elysia({ name: 'persons' }).use(projectGuard(deps.auth, deps.limiter)).get(
    '/api/projects/:project_id/persons/',
    async ({ project, query, request }) => {
      const { limit, offset } = parsePaging(query)
      const { count, rows } = await listPersons(deps.sql, project.id, { distinctId: query.distinct_id, limit, offset })
      return page(publicUrl(request, deps.trustProxy), count, limit, offset, rows.map(personJson))
    },
    {
      params: t.Object({ project_id: t.String() }),
      query: t.Object({ ...PageQuery, distinct_id: t.Optional(t.String({ description: 'the person with this distinct id' })) }),
      detail: { tags: ['persons'], summary: 'Persons, newest first, or the one with a distinct id', responses: documentedAnswer(PersonPage) },
    },
  )
}
