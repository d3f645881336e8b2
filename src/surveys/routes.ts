// /api/projects/:project_id/surveys/ — list (?search=, ?archived=), create, retrieve, PATCH (launch with
// start_date, stop with end_date, archive), DELETE (the survey and its targeting flags); stats of one survey and
// of all; and the public GET /api/surveys/?token= posthog-js reads (CORS-open, the project token only).
import { Elysia, t } from 'elysia'
import { corsHeaders } from '../http/cors'
import { errors } from '../http/errors'
import { documentedAnswer, documentedAs } from '../http/openapi'
import type { Offload } from '../http/offload'
import { page, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import { untypedJsonBody as jsonBody, booleanParam } from '../http/parse'
import type { RateLimiter } from '../http/rate-limit'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import type { ProjectTokenCache } from '../projects/token-cache'
import { PublicSurveys, Survey, SurveyPage, SurveyStats, SurveyWrite } from './model'
import type { surveyOperations } from './operations'
import type { PublicSurveyList } from './public-list'
import type { SurveysService } from './service'

export interface SurveyRouteDeps {
  surveys: SurveysService
  /** where stats are computed (the analytics thread) */
  offload: Offload<typeof surveyOperations>
  auth: PersonalKeyAuth
  limiter?: RateLimiter
  trustProxy: boolean
}

const dateParam = (v: string | undefined) => (v === undefined || v === '' ? null : v.slice(0, 100))

export function surveyRoutes(deps: SurveyRouteDeps) {
  const base = '/api/projects/:project_id/surveys'
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const idParams = t.Object({ project_id: t.String(), id: t.String() })
  const statsQuery = t.Object({ date_from: t.Optional(t.String({ description: 'ISO date or time (default: the start)' })), date_to: t.Optional(t.String({ description: 'ISO date or time (default: now)' })) })
  const tags = ['surveys']

  return new Elysia({ name: 'surveys' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      async ({ project, query, request }) => {
        const { limit, offset } = parsePaging(query)
        const search = typeof query.search === 'string' && query.search !== '' ? query.search.replace(/\0/g, '').slice(0, 400) : undefined
        const { count, results } = await deps.surveys.list(project.id, { limit, offset, search, archived: booleanParam(query.archived, 'archived') })
        return page(publicUrl(request, deps.trustProxy), count, limit, offset, results)
      },
      {
        params,
        query: t.Object({ ...PageQuery, search: t.Optional(t.String({ description: 'part of the name' })), archived: t.Optional(t.String({ description: 'true or false' })) }),
        detail: { tags, summary: 'List surveys, newest first', responses: documentedAnswer(SurveyPage) },
      },
    )
    .post(
      `${base}/`,
      async ({ principal, project, body, set }) => {
        const survey = await deps.surveys.create(project.id, principal.userId, jsonBody(body))
        set.status = 201
        return survey
      },
      {
        params,
        body: documentedAs(SurveyWrite),
        detail: { tags, summary: 'Create a survey: makes its internal targeting flag, and its targeting flag from targeting_flag_filters', responses: documentedAnswer(Survey, 'Created', 201) },
      },
    )
    // before /:id/: "stats" is not a survey id
    .get(`${base}/stats/`, ({ project, query, request }) => deps.offload('surveys.stats', [project.id, null, dateParam(query.date_from), dateParam(query.date_to)], { request }), {
      params,
      query: statsQuery,
      detail: { tags, summary: "Every survey's events together: shown, dismissed, sent, and the rates", responses: documentedAnswer(SurveyStats) },
    })
    .get(`${base}/:id/`, ({ project, params }) => deps.surveys.retrieve(project.id, params.id), {
      params: idParams,
      detail: { tags, summary: 'Retrieve a survey', responses: documentedAnswer(Survey) },
    })
    .patch(`${base}/:id/`, ({ principal, project, params, body }) => deps.surveys.update(project.id, params.id, principal.userId, jsonBody(body)), {
      params: idParams,
      body: documentedAs(SurveyWrite),
      detail: { tags, summary: 'Update a survey: start_date launches it, end_date stops it (its flags switched off), archived hides it from posthog-js', responses: documentedAnswer(Survey) },
    })
    .delete(
      `${base}/:id/`,
      async ({ principal, project, params, set }) => {
        await deps.surveys.remove(project.id, params.id, principal.userId)
        set.status = 204
        return null
      },
      { params: idParams, detail: { tags, summary: 'Delete a survey and the targeting flags it made (the linked flag stays)', responses: { 204: { description: 'Deleted' } } as never } },
    )
    .get(`${base}/:id/stats/`, ({ project, params, query, request }) => deps.offload('surveys.stats', [project.id, params.id, dateParam(query.date_from), dateParam(query.date_to)], { request }), {
      params: idParams,
      query: statsQuery,
      detail: { tags, summary: "A survey's events: shown, dismissed (partially completed ones left out), sent; persons; rates", responses: documentedAnswer(SurveyStats) },
    })
}

/** GET /api/surveys/?token=: the project's surveys that are not archived, from memory (public-list.ts). */
export function publicSurveyRoutes(deps: { tokens: ProjectTokenCache; list: PublicSurveyList }) {
  const answer = async ({ request }: { request: Request }) => {
    const query = new URL(request.url).searchParams
    const token = (query.get('token') || query.get('api_key') || '').trim()
    if (token === '') throw errors.missingApiKey()
    if (token.length > 200) throw errors.invalidApiKey()
    const teamId = await deps.tokens.resolve(token)
    const text = await deps.list.answer(teamId)
    return new Response(text, { headers: { ...corsHeaders(request), 'content-type': 'application/json' } })
  }
  const detail = { tags: ['surveys'], summary: "posthog-js's survey list: the project's surveys that are not archived (CORS-open, the project token in ?token=)", responses: documentedAnswer(PublicSurveys) }
  return new Elysia({ name: 'public-surveys' })
    .get('/api/surveys/', answer, { detail })
    // the same without the slash (posthog-js's older releases), left out of the document
    .get('/api/surveys', answer, { detail: { ...detail, hide: true } })
}
