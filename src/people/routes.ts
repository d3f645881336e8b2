// GET /api/projects/:project_id/persons/?distinct_id= — who ingestion says is who (personal key); DELETE
// …/persons/:id/ erases a person (and with ?delete_events=true its events), see erasure.ts.
import { Elysia, t } from 'elysia'
import type { Sql } from 'postgres'
import type { PersonalKeyAuth } from '../projects/auth'
import { isoDate } from '../http/format'
import { projectGuard } from '../projects/guards'
import { page, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import type { Metrics } from '../ops/metrics'
import { errors } from '../http/errors'
import type { PersonErasure } from './erasure'
import { listPersons, type PersonListing } from './repository'
import { documentedAnswer } from '../http/openapi'
import { PersonPage } from './model'
import { parsePropertyFilters, parseSearch, PERSON_SEARCH_LIMITS } from './search'
import { PropertyValueList } from '../events/model'
import { PERSONS_READ, personValues } from './property-values'

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

/** PostHog's `delete_events`: a boolean query flag. */
function flag(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '' || value === 'false' || value === '0') return false
  if (value === 'true' || value === '1') return true
  throw errors.validation('invalid', `"${value.slice(0, 20)}" is not a valid boolean: use true or false.`, name)
}

export function personRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean; erasure: PersonErasure; metrics?: Pick<Metrics, 'listPagesCut'> }) {
  return new Elysia({ name: 'persons' })
    .use(projectGuard(deps.auth, deps.limiter))
    .delete(
      '/api/projects/:project_id/persons/:id/',
      async ({ project, params, query, set }) => {
        await deps.erasure.erase(project.id, params.id, { deleteEvents: flag(query.delete_events, 'delete_events') })
        set.status = 202
        return ''
      },
      {
        params: t.Object({ project_id: t.String(), id: t.String({ description: 'the person id (its uuid)' }) }),
        query: t.Object({
          delete_events: t.Optional(t.String({ description: "true: also delete every event of the person's distinct ids from the event store" })),
        }),
        detail: {
          tags: ['persons'],
          summary: 'Erase a person: its distinct ids, static cohort memberships and (with delete_events=true) events',
          description: 'Done when answered: /decide and the persons API no longer know the person on any process; a later capture makes a new person.',
          responses: { 202: { description: 'Erased (empty body)' } },
        },
      },
    )
    .get(
      '/api/projects/:project_id/persons/values/',
      ({ project, query }) => personValues(deps.sql, project.id, { key: query.key, value: query.value }),
      {
        params: t.Object({ project_id: t.String() }),
        query: t.Object({
          key: t.Optional(t.String({ description: 'the person property (required; at most 400 characters)' })),
          value: t.Optional(t.String({ description: 'only values containing this text, case-insensitive (at most 200 characters)' })),
        }),
        detail: {
          tags: ['persons'],
          summary: 'Values of a person property',
          description: `The 50 most frequent values among the project's ${PERSONS_READ.toLocaleString('en')} newest persons, each cut to 200 characters.`,
          responses: documentedAnswer(PropertyValueList),
        },
      },
    )
    .get(
    '/api/projects/:project_id/persons/',
    async ({ project, query, request }) => {
      const { limit, offset } = parsePaging(query)
      const search = parseSearch(query.search)
      const properties = parsePropertyFilters(query.properties)
      const { count, rows, cut } = await listPersons(deps.sql, project.id, { distinctId: query.distinct_id, search, properties, limit, offset })
      if (cut) deps.metrics?.listPagesCut.inc({ list: 'persons' })
      return page(publicUrl(request, deps.trustProxy), count, limit, offset, rows.map(personJson), cut)
    },
    {
      params: t.Object({ project_id: t.String() }),
      query: t.Object({
        ...PageQuery,
        distinct_id: t.Optional(t.String({ description: 'the person with this distinct id' })),
        search: t.Optional(t.String({ description: `a distinct id (exactly) or a part of the email (at most ${PERSON_SEARCH_LIMITS.searchChars} characters)` })),
        properties: t.Optional(
          t.String({
            description: `JSON list of person-property filters, [{"key": "plan", "value": "pro", "operator": "exact", "type": "person"}] (exact only; at most ${PERSON_SEARCH_LIMITS.filters} filters, ${PERSON_SEARCH_LIMITS.propertiesChars} characters)`,
          }),
        ),
      }),
      detail: { tags: ['persons'], summary: 'Persons, newest first, or the one with a distinct id; ?search=, ?properties=', responses: documentedAnswer(PersonPage) },
    },
  )
}
