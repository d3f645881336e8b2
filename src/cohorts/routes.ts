// /api/projects/:project_id/cohorts/ — list, create (JSON, or multipart with a `csv` file), retrieve, PATCH (delete
// = PATCH {"deleted": true}; DELETE is 405), the members of a cohort, and adding or removing static members.
import { Elysia, t } from 'elysia'
import { errors } from '../http/errors'
import { isoDate } from '../http/format'
import { pageLinks, PageQuery, parsePaging, publicUrl, page } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import type { Metrics } from '../ops/metrics'
import type { PersonalKeyAuth } from '../projects/auth'
import { projectGuard } from '../projects/guards'
import type { PersonListing } from '../people/repository'
import { Cohort, CohortPage, CohortPersonsPage, CohortWrite, StaticCohortAdd, StaticCohortRemove, Success } from './model'
import { documentedAs } from '../http/openapi'
import type { CohortService } from './service'

export interface CohortRouteDeps {
  cohorts: CohortService
  auth: PersonalKeyAuth
  limiter?: RateLimiter
  trustProxy: boolean
  metrics?: Pick<Metrics, 'listPagesCut'>
}

/** A body Elysia could not type (no content type) is JSON text; multipart bodies keep the uploaded file apart. */
async function readBody(body: unknown): Promise<{ fields: unknown; csv: Uint8Array | null }> {
  if (body === undefined || body === null) return { fields: {}, csv: null }
  if (typeof body === 'string') {
    if (body.trim() === '') return { fields: {}, csv: null }
    try {
      return { fields: JSON.parse(body), csv: null }
    } catch {
      throw errors.validation('parse_error', 'Malformed request body.')
    }
  }
  if (typeof body === 'object' && !Array.isArray(body)) {
    const { csv, ...fields } = body as Record<string, unknown>
    if (csv instanceof Blob) return { fields, csv: new Uint8Array(await csv.arrayBuffer()) }
    if (csv !== undefined) throw errors.validation('invalid', 'The submitted data was not a file. Check the encoding type on the form.', 'csv')
    return { fields, csv: null }
  }
  return { fields: body, csv: null }
}

function personJson(p: PersonListing) {
  return { id: p.uuid, uuid: p.uuid, distinct_ids: p.distinct_ids, properties: p.properties, is_identified: p.is_identified, created_at: isoDate(p.created_at) }
}

export function cohortRoutes(deps: CohortRouteDeps) {
  const base = '/api/projects/:project_id/cohorts'
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const idParams = t.Object({ project_id: t.String(), id: t.String() })
  const tags = ['cohorts']

  return new Elysia({ name: 'cohorts' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      async ({ project, params, query, request }) => {
        const teamId = project.id
        const { limit, offset } = parsePaging(query)
        const search = typeof query.search === 'string' && query.search !== '' ? query.search.replace(/\0/g, '') : undefined
        const type = query.type === 'static' || query.type === 'dynamic' ? query.type : undefined
        const createdById = query.created_by_id && /^\d{1,9}$/.test(query.created_by_id) ? Number(query.created_by_id) : undefined
        const { count, results } = await deps.cohorts.list(teamId, { limit, offset, search, type, createdById })
        return page(publicUrl(request, deps.trustProxy), count, limit, offset, results)
      },
      {
        params,
        query: t.Object({
          ...PageQuery,
          search: t.Optional(t.String({ description: 'case-insensitive part of the name' })),
          type: t.Optional(t.String({ description: 'static or dynamic' })),
          created_by_id: t.Optional(t.String()),
        }),
        response: { 200: CohortPage },
        detail: { tags, summary: 'List cohorts (not deleted), newest first' },
      },
    )
    .post(
      `${base}/`,
      async ({ principal, project, params, body, set }) => {
        const teamId = project.id
        const { fields, csv } = await readBody(body)
        const cohort = await deps.cohorts.create(teamId, principal.userId, fields, csv)
        set.status = 201
        return cohort
      },
      { params, body: CohortWrite, response: { 201: Cohort }, detail: { tags, summary: 'Create a cohort (dynamic: filters; static: is_static with _create_static_person_ids or a csv file)' } },
    )
    .get(`${base}/:id/`, async ({ project, params }) => deps.cohorts.retrieve(project.id, params.id), {
      params: idParams,
      response: { 200: Cohort },
      detail: { tags, summary: 'Retrieve a cohort (deleted ones too)' },
    })
    .patch(
      `${base}/:id/`,
      async ({ project, params, body }) => {
        const teamId = project.id
        const { fields, csv } = await readBody(body)
        return deps.cohorts.update(teamId, params.id, fields, csv)
      },
      { params: idParams, body: CohortWrite, response: { 200: Cohort }, detail: { tags, summary: 'Update a cohort; {"deleted": true} deletes it; a csv file adds members to a static cohort' } },
    )
    .delete(
      `${base}/:id/`,
      async ({ project, params }) => {
        throw errors.methodNotAllowed('DELETE')
      },
      { params: idParams, detail: { tags, summary: 'Not allowed (405): PATCH {"deleted": true} instead', hide: true } },
    )
    .get(
      `${base}/:id/persons/`,
      async ({ project, params, query, request }) => {
        const teamId = project.id
        const { limit, offset } = parsePaging(query)
        const { rows, cut } = await deps.cohorts.persons(teamId, params.id, limit, offset)
        if (cut) deps.metrics?.listPagesCut.inc({ list: 'cohort_persons' })
        // PostHog's persons page: no count; a full page (or one cut at its byte budget) has a next link
        const more = rows.length >= limit || cut
        const links = pageLinks(publicUrl(request, deps.trustProxy), more ? offset + rows.length + 1 : offset + rows.length, limit, offset, rows.length)
        return { results: rows.map(personJson), next: links.next, previous: links.previous }
      },
      {
        params: idParams,
        query: t.Object(PageQuery),
        response: { 200: CohortPersonsPage },
        detail: { tags, summary: "The cohort's persons: a static cohort's members, or the persons matching a dynamic cohort now" },
      },
    )
    .patch(
      `${base}/:id/add_persons_to_static_cohort/`,
      async ({ project, params, body }) => deps.cohorts.addPersons(project.id, params.id, (await readBody(body)).fields),
      {
        params: idParams,
        body: documentedAs(StaticCohortAdd),
        response: { 200: Success },
        detail: { tags, summary: 'Add persons to a static cohort' },
      },
    )
    .patch(
      `${base}/:id/remove_person_from_static_cohort/`,
      async ({ project, params, body }) => deps.cohorts.removePerson(project.id, params.id, (await readBody(body)).fields),
      {
        params: idParams,
        body: documentedAs(StaticCohortRemove),
        response: { 200: Success },
        detail: { tags, summary: 'Remove a person from a static cohort' },
      },
    )
}
