// TypeBox schemas of cohorts: what the routes answer, and what the OpenAPI document shows.
import { t } from 'elysia'
import { model } from '../http/openapi'

const nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()])

export const Cohort = model(
  'Cohort',
  t.Object({
    id: t.Integer(),
    name: nullable(t.String()),
    description: t.String(),
    groups: t.Array(t.Any(), { description: "PostHog's legacy criteria, echoed as given" }),
    deleted: t.Boolean(),
    filters: t.Any({ description: '{"properties": {"type": "AND"|"OR", "values": [group | filter]}}; filters are {key, type: "person", value, operator, negation?} or {key: "id", type: "cohort", value, negation?}' }),
    query: t.Null(),
    is_calculating: t.Boolean(),
    created_by: t.Any({ description: 'the user who created it, or null' }),
    created_at: nullable(t.String({ format: 'date-time' })),
    last_calculation: nullable(t.String({ format: 'date-time' })),
    errors_calculating: t.Integer(),
    count: nullable(t.Integer({ description: "members of a static cohort; a dynamic one's size when it was last read (null: not computed since its last edit, or more persons than one scan looks at)" })),
    is_static: t.Boolean(),
    cohort_type: t.String({ description: 'static, person_property or behavioral' }),
    experiment_set: t.Array(t.Integer()),
    version: t.Integer(),
    csv_skipped: t.Optional(
      t.Object(
        {
          count: t.Integer({ description: 'ids of the uploaded CSV that named no person of the project' }),
          ids: t.Array(t.String(), { description: 'the first of them (at most 100), as written in the file' }),
        },
        { description: 'only in the answer to a CSV upload: the ids that were skipped' },
      ),
    ),
  }),
)

export const CohortPage = model(
  'CohortPage',
  t.Object({
    count: t.Integer(),
    next: nullable(t.String()),
    previous: nullable(t.String()),
    results: t.Array(Cohort),
  }),
)

export const CohortPerson = model(
  'CohortPerson',
  t.Object({
    id: t.String(),
    uuid: t.String(),
    distinct_ids: t.Array(t.String(), { description: 'at most 10' }),
    properties: t.Any(),
    is_identified: t.Boolean(),
    created_at: nullable(t.String({ format: 'date-time' })),
  }),
)

export const CohortPersonsPage = model(
  'CohortPersonsPage',
  t.Object({ results: t.Array(CohortPerson), next: nullable(t.String()), previous: nullable(t.String()) }),
)

export const Success = model('Success', t.Object({ success: t.Boolean() }))

export const StaticCohortAdd = model(
  'StaticCohortAdd',
  t.Object({ person_ids: t.Array(t.String({ description: 'a person uuid' }), { maxItems: 1000 }) }, { description: 'JSON, or a form with the same field' }),
)

export const StaticCohortRemove = model('StaticCohortRemove', t.Object({ person_id: t.String({ description: 'a person uuid' }) }))

export const CohortWrite = model(
  'CohortWrite',
  t.Any({
    description:
      'JSON {name, description, filters, groups, is_static, deleted, _create_static_person_ids: [person uuid]}; or multipart/form-data with the same fields and a `csv` file of ids (static cohorts)',
  }),
)
