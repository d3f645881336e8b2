// /api/projects/:project_id/actions/ — list (search by name), create, retrieve, PATCH (delete = PATCH
// {"deleted": true}; DELETE is 405, as PostHog answers it). Documented in docs/actions.md.
import { Elysia, t } from 'elysia'
import type { Sql } from 'postgres'
import { errors } from '../http/errors'
import { documentedAs } from '../http/openapi'
import { PageQuery, page, parsePaging, publicUrl } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import { Action, ActionPage, ActionWrite } from './model'
import { ActionService } from './service'

const MAX_SEARCH_LENGTH = 200

function searchParam(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined
  if (raw.length > MAX_SEARCH_LENGTH) throw errors.validation('max_length', `search may have at most ${MAX_SEARCH_LENGTH} characters.`, 'search')
  return raw.replace(/\0/g, '')
}

export function actionRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean }) {
  const actions = new ActionService({ sql: deps.sql })
  const base = '/api/projects/:project_id/actions'
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const idParams = t.Object({ project_id: t.String(), id: t.String() })
  const tags = ['actions']

  return new Elysia({ name: 'actions' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      async ({ project, query, request }) => {
        const { limit, offset } = parsePaging(query)
        const { count, results } = await actions.list(project.id, { limit, offset, search: searchParam(query.search) })
        return page(publicUrl(request, deps.trustProxy), count, limit, offset, results)
      },
      {
        params,
        query: t.Object({ ...PageQuery, search: t.Optional(t.String({ description: 'case-insensitive part of the name' })) }),
        response: { 200: ActionPage },
        detail: { tags, summary: 'List actions (not deleted), by name' },
      },
    )
    .post(
      `${base}/`,
      async ({ principal, project, body, set }) => {
        const action = await actions.create(project.id, principal.userId, body)
        set.status = 201
        return action
      },
      { params, body: documentedAs(ActionWrite), response: { 201: Action }, detail: { tags, summary: 'Create an action (steps: an event matches when it matches any step)' } },
    )
    .get(`${base}/:id/`, ({ project, params }) => actions.retrieve(project.id, params.id), {
      params: idParams,
      response: { 200: Action },
      detail: { tags, summary: 'Retrieve an action (deleted ones too)' },
    })
    .patch(`${base}/:id/`, ({ project, params, body }) => actions.update(project.id, params.id, body), {
      params: idParams,
      body: documentedAs(ActionWrite),
      response: { 200: Action },
      detail: { tags, summary: 'Update an action; {"deleted": true} deletes it' },
    })
    .delete(
      `${base}/:id/`,
      () => {
        throw errors.methodNotAllowed('DELETE')
      },
      { params: idParams, detail: { tags, summary: 'Not allowed (405): PATCH {"deleted": true} instead', hide: true } },
    )
}
