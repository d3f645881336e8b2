// /api/projects/:project_id/experiments/ — list (?status=draft|running|complete, ?archived=, ?search=), create,
// retrieve, PATCH (launch with start_date, stop with end_date, archive, {"deleted": true}); DELETE is 405; and the
// results of a metric: GET …/experiments/:id/results/?metric_index=N.
import { Elysia, t } from 'elysia'
import { errors } from '../http/errors'
import { documentedAnswer, documentedAs } from '../http/openapi'
import { page, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import { untypedJsonBody as jsonBody, booleanParam } from '../http/parse'
import type { RateLimiter } from '../http/rate-limit'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import { Experiment, ExperimentPage, ExperimentResults, ExperimentWrite } from './model'
import type { ExperimentsService } from './service'
import type { Offload } from '../http/offload'
import type { experimentOperations } from './operations'

export interface ExperimentRouteDeps {
  experiments: ExperimentsService
  /** where results are computed (the analytics thread) */
  offload: Offload<typeof experimentOperations>
  auth: PersonalKeyAuth
  limiter?: RateLimiter
  trustProxy: boolean
}

function statusParam(value: string | undefined): 'draft' | 'running' | 'complete' | undefined {
  if (value === undefined || value === '' || value === 'all') return undefined
  if (value === 'draft' || value === 'running' || value === 'complete') return value
  throw errors.validation('invalid_choice', `"${value.slice(0, 40)}" is not a valid choice: draft, running, complete or all.`, 'status')
}

export function experimentRoutes(deps: ExperimentRouteDeps) {
  const base = '/api/projects/:project_id/experiments'
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const idParams = t.Object({ project_id: t.String(), id: t.String() })
  const tags = ['experiments']

  return new Elysia({ name: 'experiments' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      async ({ project, query, request }) => {
        const { limit, offset } = parsePaging(query)
        const search = typeof query.search === 'string' && query.search !== '' ? query.search.replace(/\0/g, '').slice(0, 400) : undefined
        const options = { limit, offset, search, status: statusParam(query.status), archived: booleanParam(query.archived, 'archived') }
        const { count, results } = await deps.experiments.list(project.id, options)
        return page(publicUrl(request, deps.trustProxy), count, limit, offset, results)
      },
      {
        params,
        query: t.Object({
          ...PageQuery,
          search: t.Optional(t.String({ description: 'part of the name or of the flag key' })),
          status: t.Optional(t.String({ description: 'draft, running, complete or all' })),
          archived: t.Optional(t.String({ description: 'true or false' })),
        }),
        detail: { tags, summary: 'List experiments (not deleted), newest first', responses: documentedAnswer(ExperimentPage) },
      },
    )
    .post(
      `${base}/`,
      async ({ principal, project, body, set }) => {
        const experiment = await deps.experiments.create(project.id, principal.userId, jsonBody(body))
        set.status = 201
        return experiment
      },
      {
        params,
        body: documentedAs(ExperimentWrite),
        detail: { tags, summary: 'Create an experiment: makes its multivariate flag (inactive while a draft) or reuses one', responses: documentedAnswer(Experiment, 'Created', 201) },
      },
    )
    .get(`${base}/:id/`, ({ project, params }) => deps.experiments.retrieve(project.id, params.id), {
      params: idParams,
      detail: { tags, summary: 'Retrieve an experiment', responses: documentedAnswer(Experiment) },
    })
    .patch(`${base}/:id/`, ({ principal, project, params, body }) => deps.experiments.update(project.id, params.id, principal.userId, jsonBody(body)), {
      params: idParams,
      body: documentedAs(ExperimentWrite),
      detail: { tags, summary: 'Update an experiment: start_date launches it, end_date stops it; {"deleted": true} deletes it', responses: documentedAnswer(Experiment) },
    })
    .delete(
      `${base}/:id/`,
      () => {
        throw errors.methodNotAllowed('DELETE')
      },
      { params: idParams, detail: { tags, summary: 'Not allowed (405): PATCH {"deleted": true} instead', hide: true } },
    )
    .get(
      `${base}/:id/results/`,
      ({ project, params, query, request }) => {
        const raw = query.metric_index ?? '0'
        if (!/^\d{1,3}$/.test(raw)) throw errors.validation('invalid_input', 'A valid integer is required.', 'metric_index')
        return deps.offload('experiments.results', [project.id, params.id, Number(raw)], { request })
      },
      {
        params: idParams,
        query: t.Object({ metric_index: t.Optional(t.String({ description: 'the metric: 0… over metrics, then metrics_secondary (default 0)' })) }),
        detail: { tags, summary: "Results of one of the experiment's metrics (as POST /query/ with an ExperimentQuery)", responses: documentedAnswer(ExperimentResults) },
      },
    )
}
