// TypeBox schemas of event definitions: the routes validate with them and the OpenAPI document shows them.
import { t } from 'elysia'
import { model } from '../http/openapi'

const DateTime = t.Union([t.String({ format: 'date-time' }), t.Null()])

export const UserBasic = model(
  'UserBasic',
  t.Object({
    id: t.Integer(),
    uuid: t.String({ format: 'uuid' }),
    distinct_id: t.String(),
    first_name: t.String(),
    email: t.String(),
    is_email_verified: t.Boolean(),
  }),
)

export const EventDefinition = model(
  'EventDefinition',
  t.Object({
    id: t.String({ format: 'uuid' }),
    name: t.String(),
    created_at: t.Union([DateTime], { description: 'first sighting; null for a definition created through the API' }),
    last_seen_at: t.Union([DateTime], { description: 'advanced at most once an hour per name' }),
    last_updated_at: DateTime,
    tags: t.Array(t.String()),
    is_action: t.Boolean(),
    action_id: t.Null(),
    is_calculating: t.Boolean(),
    last_calculated_at: t.Null(),
    created_by: t.Union([UserBasic, t.Null()]),
    post_to_chat: t.Boolean(),
  }),
)

const pageOf = <T extends ReturnType<typeof t.Object>>(name: string, item: T) =>
  model(
    name,
    t.Object({
      count: t.Integer(),
      next: t.Union([t.String(), t.Null()], { description: 'absolute URL of the next page' }),
      previous: t.Union([t.String(), t.Null()], { description: 'absolute URL of the previous page' }),
      results: t.Array(item),
    }),
  )

export const EventDefinitionPage = pageOf('EventDefinitionPage', EventDefinition)

export const EventDefinitionChanges = model(
  'EventDefinitionChanges',
  t.Object(
    {
      name: t.Optional(t.String()),
      created_at: t.Optional(DateTime),
      last_seen_at: t.Optional(DateTime),
      tags: t.Optional(t.Array(t.String())),
      post_to_chat: t.Optional(t.Boolean()),
    },
    { description: 'any of these members; each is checked by the service, so an error names its member in attr' },
  ),
)
