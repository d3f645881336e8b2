// /api/projects/:project_id/feature_flags/ (list, create, retrieve, PATCH, PUT; DELETE is 405: delete with
// PATCH {"deleted": true}) and local_evaluation: under the project, at /api/feature_flag/ and at /flags/definitions
// (both by ?token=, the latter what posthog-node 5 calls).
import { Elysia, t } from 'elysia'
import { ApiError, errors } from '../http/errors'
import type { PersonalKeyAuth, Principal } from '../projects/auth'
import { personalKeyGuard, projectGuard } from '../projects/guards'
import { page, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import type { ProjectTokenCache } from '../projects/token-cache'
import { etagMatches, type FlagService } from './service'
import { documentedAnswer, documentedAs } from '../http/openapi'
import { Flag, FlagPage, FlagWrite, LocalEvaluationAnswer } from './model'

export interface FlagRouteDeps {
  flags: FlagService
  auth: PersonalKeyAuth
  tokens: ProjectTokenCache
  limiter?: RateLimiter
  trustProxy: boolean
}

/** A JSON body Elysia could not type (no content type): parse it ourselves. */
function jsonBody(body: unknown): unknown {
  if (typeof body !== 'string') return body ?? {}
  if (body.trim() === '') return {}
  try {
    return JSON.parse(body)
  } catch {
    throw errors.validation('parse_error', 'Malformed request body.')
  }
}

function activeFilter(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined
  const v = value.trim().toLowerCase()
  return v === 'true' ? true : v === 'false' ? false : undefined
}

export function flagRoutes(deps: FlagRouteDeps) {
  const base = '/api/projects/:project_id/feature_flags'
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const idParams = t.Object({ project_id: t.String(), id: t.String() })
  const project = (principal: Principal, id: string) => deps.auth.project(principal, id)
  const tags = ['feature flags']

  const localEvaluation = async (teamId: number, request: Request) => {
    // `&send_cohorts` with no value (what posthog-node sends): its presence is what counts
    const { body, etag } = await deps.flags.localEvaluation(teamId, new URL(request.url).searchParams.has('send_cohorts'))
    const headers = { etag: `W/"${etag}"`, 'cache-control': 'private, must-revalidate', 'content-type': 'application/json' }
    if (etagMatches(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers })
    return new Response(body, { headers })
  }

  /** The project a ?token= names, if the key's user may see it (else 401 for an unknown token, 403 for no access). */
  const projectOfToken = async (principal: Principal, token: string | undefined) => {
    if (!token) return (await project(principal, '@current')).id
    const found = await deps.tokens.lookup(token)
    if (found === 'unknown') {
      throw new ApiError(401, 'authentication_error', 'authentication_failed', 'Incorrect authentication credentials.')
    }
    if (found === 'unavailable') throw errors.databaseUnavailable()
    try {
      return (await project(principal, String(found))).id
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        throw new ApiError(403, 'authentication_error', 'permission_denied', "You don't have access to the project.")
      }
      throw error
    }
  }

  const projectRoutes = new Elysia({ name: 'feature-flags' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      async ({ project, query, request }) => {
        const teamId = project.id
        const { limit, offset } = parsePaging(query)
        const search = typeof query.search === 'string' && query.search !== '' ? query.search.replace(/\0/g, '') : undefined
        const { count, results } = await deps.flags.list(teamId, { limit, offset, search, active: activeFilter(query.active) })
        return page(publicUrl(request, deps.trustProxy), count, limit, offset, results)
      },
      {
        params,
        query: t.Object({
          ...PageQuery,
          search: t.Optional(t.String({ description: 'part of the key or name' })),
          active: t.Optional(t.String({ description: 'true or false' })),
        }),
        detail: { tags, summary: 'List feature flags (not deleted), newest first; ?search=, ?active=true|false', responses: documentedAnswer(FlagPage) },
      },
    )
    .post(
      `${base}/`,
      async ({ principal, project, body, set }) => {
        const teamId = project.id
        const flag = await deps.flags.create(teamId, principal.userId, jsonBody(body))
        set.status = 201
        return flag
      },
      { params, body: documentedAs(FlagWrite), detail: { tags, summary: 'Create a feature flag', responses: documentedAnswer(Flag, 'Created', 201) } },
    )
    .get(`${base}/local_evaluation`, async ({ project, request }) => localEvaluation(project.id, request), {
      params,
      detail: { tags, summary: 'Flag definitions for server SDKs that evaluate locally (ETag / 304)', responses: documentedAnswer(LocalEvaluationAnswer) },
    })
    .get(
      `${base}/:id/`,
      async ({ project, params }) => deps.flags.retrieve(project.id, params.id),
      { params: idParams, detail: { tags, summary: 'Retrieve a feature flag (deleted ones too)', responses: documentedAnswer(Flag) } },
    )
    .patch(
      `${base}/:id/`,
      async ({ principal, project, params, body }) => deps.flags.update(project.id, params.id, principal.userId, jsonBody(body), 'PATCH'),
      { params: idParams, body: documentedAs(FlagWrite), detail: { tags, summary: 'Update a feature flag (bumps version); {"deleted": true} deletes it', responses: documentedAnswer(Flag) } },
    )
    .put(
      `${base}/:id/`,
      async ({ principal, project, params, body }) => deps.flags.update(project.id, params.id, principal.userId, jsonBody(body), 'PUT'),
      { params: idParams, body: documentedAs(FlagWrite), detail: { tags, summary: 'Replace a feature flag (key required)', responses: documentedAnswer(Flag) } },
    )
    .delete(
      `${base}/:id/`,
      async () => {
        // As PostHog's ForbidDestroyModel: flags are deleted with PATCH {"deleted": true}.
        throw errors.methodNotAllowed('DELETE')
      },
      { params: idParams, detail: { tags, summary: 'Not allowed (405): PATCH {"deleted": true} instead', hide: true } },
    )

  // Named by the project's token, not by a project id in the path.
  const tokenRoutes = new Elysia({ name: 'feature-flag-definitions' })
    .use(personalKeyGuard(deps.auth, deps.limiter))
    .get(
      '/api/feature_flag/local_evaluation',
      async ({ principal, query, request }) => localEvaluation(await projectOfToken(principal, query.token), request),
      { detail: { tags, summary: 'Flag definitions of the project whose API token is ?token= (posthog-node local evaluation)', responses: documentedAnswer(LocalEvaluationAnswer) } },
    )
    // where posthog-node 5 asks for the same definitions
    .get(
      '/flags/definitions',
      async ({ principal, query, request }) => localEvaluation(await projectOfToken(principal, query.token), request),
      { detail: { tags, summary: 'Flag definitions for local evaluation, as posthog-node 5 asks for them (same as local_evaluation)', responses: documentedAnswer(LocalEvaluationAnswer) } },
    )
  return new Elysia({ name: 'feature-flag-routes' }).use(projectRoutes).use(tokenRoutes)
}
