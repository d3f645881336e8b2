// /api/projects/:project_id/event_definitions/ and …/property_definitions/ (personal key).
// Thin: authenticate, resolve the project, parse the query, call the service.
import { Elysia, t, type TSchema } from 'elysia'
import type { Sql } from 'postgres'
import type { PersonalKeyAuth } from '../projects/auth'
import { page, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import { projectGuard } from '../projects/guards'
import {
  BulkTagsAnswer,
  BulkTagsBody,
  EventDefinition,
  EventDefinitionChanges,
  EventDefinitionCreate,
  EventDefinitionPage,
  PropertyDefinition,
  PropertyDefinitionChanges,
  PropertyDefinitionPage,
  SeenTogether,
} from './model'
import { PropertyDefinitionService } from './property-service'
import { parsePropertyListParams, parseSeenTogether } from './property-validation'
import { booleanParam, searchTerms } from './rules'
import { DefinitionService } from './service'
import { parseEventType, parseOrdering } from './validation'

/** A request body documented with its schema but checked by the service (so each error names its member). */
const checkedBody = (schema: TSchema): never => ({ required: true, content: { 'application/json': { schema } } }) as never
const DELETED = { 204: { description: 'Deleted (empty body)' } }
const text = (description: string) => t.Optional(t.String({ description }))
const oneOrMore = (description: string) => t.Optional(t.Union([t.String(), t.Array(t.String())], { description }))

export function definitionRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean }) {
  const events = new DefinitionService({ sql: deps.sql })
  const properties = new PropertyDefinitionService({ sql: deps.sql })
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const idParams = t.Object({ project_id: t.String(), id: t.String({ description: 'the definition’s UUID' }) })
  const eventBase = '/api/projects/:project_id/event_definitions'
  const propertyBase = '/api/projects/:project_id/property_definitions'
  const eventTags = ['event definitions']
  const propertyTags = ['property definitions']

  return new Elysia({ name: 'definitions' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      `${eventBase}/`,
      async ({ project, params, query, request }) => {
        const teamId = project.id
        const { limit, offset } = parsePaging(query)
        const url = publicUrl(request, deps.trustProxy)
        const { count, results } = await events.listEvents({
          teamId,
          limit,
          offset,
          terms: searchTerms(query.search),
          eventType: parseEventType(query.event_type),
          ordering: parseOrdering(url.searchParams.getAll('ordering')),
          excludeHidden: booleanParam(query.exclude_hidden, 'exclude_hidden') === true,
        })
        return page(url, count, limit, offset, results)
      },
      {
        params,
        query: t.Object({
          ...PageQuery,
          search: text('every space-separated term must appear in the name'),
          ordering: oneOrMore('name, last_seen_at, created_at (…::date); - for descending'),
          event_type: text('event (default), event_custom or event_posthog'),
          exclude_hidden: text('true: leave hidden definitions out'),
        }),
        response: { 200: EventDefinitionPage },
        detail: { tags: eventTags, summary: 'List event definitions' },
      },
    )
    .post(
      `${eventBase}/`,
      async ({ principal, project, params, body, set }) => {
        const created = await events.createEvent(project.id, principal.userId, body)
        set.status = 201
        return created
      },
      {
        params,
        response: { 201: EventDefinition },
        detail: { tags: eventTags, summary: 'Create an event definition ahead of ingestion (created_at and last_seen_at null)', requestBody: checkedBody(EventDefinitionCreate) },
      },
    )
    .get(`${eventBase}/by_name/`, async ({ project, params, query }) => events.retrieveEventByName(project.id, query.name), {
      params,
      query: t.Object({ name: text('the exact event name') }),
      response: { 200: EventDefinition },
      detail: { tags: eventTags, summary: 'Retrieve an event definition by its exact name' },
    })
    .post(
      `${eventBase}/bulk_update_tags/`,
      async ({ principal, project, params, body }) => events.bulkTagEvents(project.id, principal.userId, body),
      {
        params,
        response: { 200: BulkTagsAnswer },
        detail: { tags: eventTags, summary: 'Add, remove or set tags on many event definitions', requestBody: checkedBody(BulkTagsBody) },
      },
    )
    .get(`${eventBase}/:id/`, async ({ project, params }) => events.retrieveEvent(project.id, params.id), {
      params: idParams,
      response: { 200: EventDefinition },
      detail: { tags: eventTags, summary: 'Retrieve an event definition' },
    })
    .patch(
      `${eventBase}/:id/`,
      async ({ principal, project, params, body }) => events.updateEvent(project.id, params.id, principal.userId, body),
      {
        params: idParams,
        response: { 200: EventDefinition },
        detail: { tags: eventTags, summary: 'Update an event definition', requestBody: checkedBody(EventDefinitionChanges) },
      },
    )
    .put(
      `${eventBase}/:id/`,
      async ({ principal, project, params, body }) => events.updateEvent(project.id, params.id, principal.userId, body),
      {
        params: idParams,
        response: { 200: EventDefinition },
        detail: { tags: eventTags, summary: 'Update an event definition (as PATCH)', requestBody: checkedBody(EventDefinitionChanges) },
      },
    )
    .delete(
      `${eventBase}/:id/`,
      async ({ project, params }) => {
        await events.deleteEvent(project.id, params.id)
        return new Response(null, { status: 204 })
      },
      { params: idParams, detail: { tags: eventTags, summary: 'Delete an event definition', responses: DELETED } },
    )
    .get(
      `${propertyBase}/`,
      async ({ project, params, query, request }) => {
        const teamId = project.id
        const { limit, offset } = parsePaging(query)
        const filters = parsePropertyListParams(query)
        const { count, results } = await properties.list({ teamId, limit, offset, terms: searchTerms(query.search), ...filters })
        return page(publicUrl(request, deps.trustProxy), count, limit, offset, results)
      },
      {
        params,
        query: t.Object({
          ...PageQuery,
          type: text('event (default), person, group or session'),
          group_type_index: text('0–4; required exactly when type=group'),
          search: text('every space-separated term must appear in the name'),
          properties: text('exact names, comma-separated'),
          is_numerical: text('true: numeric properties only'),
          is_feature_flag: text('true: $feature/* only; false: none of them'),
          event_names: text('JSON array of event names: sets is_seen_on_filtered_events (type=event only)'),
          filter_by_event_names: text('true: only properties seen on event_names'),
          excluded_properties: text('JSON array of names to leave out'),
          exclude_hidden: text('true: leave hidden definitions out'),
        }),
        response: { 200: PropertyDefinitionPage },
        detail: { tags: propertyTags, summary: 'List property definitions: seen on event_names first, then verified, then by name' },
      },
    )
    .get(
      `${propertyBase}/seen_together/`,
      async ({ project, params, request }) => {
        const teamId = project.id
        const search = new URL(request.url).searchParams
        const { events: names, property } = parseSeenTogether(search.getAll('event_names'), search.get('property_name'))
        // answered as text: Elysia's answer check would drop an event named "__proto__" from the object
        return Response.json(await properties.seenTogether(teamId, names, property))
      },
      {
        params,
        query: t.Object({ event_names: oneOrMore('event names, repeated'), property_name: text('the property') }),
        response: { 200: SeenTogether },
        detail: { tags: propertyTags, summary: 'For each event name: whether the property has been seen on it' },
      },
    )
    .post(
      `${propertyBase}/bulk_update_tags/`,
      async ({ principal, project, params, body }) => properties.bulkTag(project.id, principal.userId, body),
      {
        params,
        response: { 200: BulkTagsAnswer },
        detail: { tags: propertyTags, summary: 'Add, remove or set tags on many property definitions', requestBody: checkedBody(BulkTagsBody) },
      },
    )
    .get(`${propertyBase}/:id/`, async ({ project, params }) => properties.retrieve(project.id, params.id), {
      params: idParams,
      response: { 200: PropertyDefinition },
      detail: { tags: propertyTags, summary: 'Retrieve a property definition' },
    })
    .patch(
      `${propertyBase}/:id/`,
      async ({ principal, project, params, body }) => properties.update(project.id, params.id, principal.userId, body),
      {
        params: idParams,
        response: { 200: PropertyDefinition },
        detail: { tags: propertyTags, summary: 'Update a property definition', requestBody: checkedBody(PropertyDefinitionChanges) },
      },
    )
    .put(
      `${propertyBase}/:id/`,
      async ({ principal, project, params, body }) => properties.update(project.id, params.id, principal.userId, body),
      {
        params: idParams,
        response: { 200: PropertyDefinition },
        detail: { tags: propertyTags, summary: 'Update a property definition (as PATCH)', requestBody: checkedBody(PropertyDefinitionChanges) },
      },
    )
    .delete(
      `${propertyBase}/:id/`,
      async ({ project, params }) => {
        await properties.delete(project.id, params.id)
        return new Response(null, { status: 204 })
      },
      { params: idParams, detail: { tags: propertyTags, summary: 'Delete a property definition (it comes back when ingestion next sees it)', responses: DELETED } },
    )
}
