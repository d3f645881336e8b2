// /api/projects/:project_id/event_definitions/ — list, retrieve, PATCH, DELETE (personal key).
// Thin: authenticate, resolve the project, parse the query, call the service.
import { Elysia, t, type TSchema } from 'elysia'
import type { Sql } from 'postgres'
import type { PersonalKeyAuth } from '../projects/auth'
import { page, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import { personalKeyGuard } from '../projects/guards'
import { EventDefinition, EventDefinitionChanges, EventDefinitionPage } from './model'
import { searchTerms } from './rules'
import { DefinitionService } from './service'
import { parseEventType, parseOrdering } from './validation'

/** A request body documented with its schema but checked by the service (so each error names its member). */
const checkedBody = (schema: TSchema): never => ({ required: true, content: { 'application/json': { schema } } }) as never
const DELETED = { 204: { description: 'Deleted (empty body)' } }

export function definitionRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean }) {
  const { auth } = deps
  const definitions = new DefinitionService({ sql: deps.sql })
  const base = '/api/projects/:project_id/event_definitions'
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const idParams = t.Object({ project_id: t.String(), id: t.String({ description: 'the definition’s UUID' }) })
  const tags = ['event definitions']
  return new Elysia({ name: 'definitions' })
    .use(personalKeyGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      async ({ principal, params, query, request }) => {
        const project = await auth.project(principal, params.project_id)
        const { limit, offset } = parsePaging(query)
        const url = publicUrl(request, deps.trustProxy)
        const { count, results } = await definitions.listEvents({
          teamId: project.id,
          limit,
          offset,
          terms: searchTerms(query.search),
          eventType: parseEventType(query.event_type),
          ordering: parseOrdering(url.searchParams.getAll('ordering')),
        })
        return page(url, count, limit, offset, results)
      },
      {
        params,
        query: t.Object({
          ...PageQuery,
          search: t.Optional(t.String({ description: 'every space-separated term must appear in the name' })),
          ordering: t.Optional(t.Union([t.String(), t.Array(t.String())], { description: 'name, last_seen_at, created_at (…::date); - for descending' })),
          event_type: t.Optional(t.String({ description: 'event (default), event_custom or event_posthog' })),
        }),
        response: { 200: EventDefinitionPage },
        detail: { tags, summary: 'List event definitions' },
      },
    )
    .get(`${base}/:id/`, async ({ principal, params }) => definitions.retrieveEvent((await auth.project(principal, params.project_id)).id, params.id), {
      params: idParams,
      response: { 200: EventDefinition },
      detail: { tags, summary: 'Retrieve an event definition' },
    })
    .patch(
      `${base}/:id/`,
      async ({ principal, params, body }) => definitions.updateEvent((await auth.project(principal, params.project_id)).id, params.id, body),
      {
        params: idParams,
        response: { 200: EventDefinition },
        detail: { tags, summary: 'Update an event definition', requestBody: checkedBody(EventDefinitionChanges) },
      },
    )
    .delete(
      `${base}/:id/`,
      async ({ principal, params }) => {
        await definitions.deleteEvent((await auth.project(principal, params.project_id)).id, params.id)
        return new Response(null, { status: 204 })
      },
      { params: idParams, detail: { tags, summary: 'Delete an event definition', responses: DELETED } },
    )
}
