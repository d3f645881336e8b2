// TypeBox schemas of event and property definitions: the routes answer with them and the OpenAPI document shows
// them. Request bodies are documented here but checked by the service, member by member, so that each error names
// its member in `attr`.
import { t } from 'elysia'
import { model } from '../http/openapi'
import { pageModel } from '../http/pagination'

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
    description: t.String(),
    created_at: t.Union([DateTime], { description: 'first sighting; null for a definition created through the API' }),
    last_seen_at: t.Union([DateTime], { description: 'advanced at most once an hour per name; null until first seen' }),
    last_updated_at: DateTime,
    tags: t.Array(t.String()),
    verified: t.Boolean(),
    verified_at: DateTime,
    verified_by: t.Union([UserBasic, t.Null()]),
    hidden: t.Boolean(),
    is_action: t.Boolean(),
    action_id: t.Null(),
    is_calculating: t.Boolean(),
    last_calculated_at: t.Null(),
    created_by: t.Union([UserBasic, t.Null()]),
    post_to_chat: t.Boolean(),
  }),
)

export const EventDefinitionPage = pageModel('EventDefinitionPage', EventDefinition)

const curation = {
  verified: t.Optional(t.Boolean({ description: 'true stamps verified_at/verified_by (unless already verified) and unhides; false clears them' })),
  hidden: t.Optional(t.Boolean({ description: 'true unverifies; hidden and verified both true is refused' })),
}
const tagList = t.Array(t.String({ maxLength: 255 }), { maxItems: 100, description: 'trimmed, lower-cased, de-duplicated' })

export const EventDefinitionChanges = model(
  'EventDefinitionChanges',
  t.Object(
    {
      name: t.Optional(t.String({ maxLength: 400 })),
      description: t.Optional(t.String()),
      tags: t.Optional(tagList),
      ...curation,
      post_to_chat: t.Optional(t.Boolean()),
      created_at: t.Optional(DateTime),
      last_seen_at: t.Optional(DateTime),
    },
    { description: 'any of these members (read-only members of the object are ignored, others refused)' },
  ),
)

export const EventDefinitionCreate = model(
  'EventDefinitionCreate',
  t.Object({
    name: t.String({ maxLength: 400, description: 'unique in the project' }),
    description: t.Optional(t.String()),
    tags: t.Optional(tagList),
    ...curation,
    post_to_chat: t.Optional(t.Boolean()),
  }),
)

export const BulkTagsBody = model(
  'BulkTagsBody',
  t.Object({
    ids: t.Array(t.String({ format: 'uuid' }), { maxItems: 500 }),
    action: t.Union([t.Literal('add'), t.Literal('remove'), t.Literal('set')]),
    tags: tagList,
  }),
)

export const BulkTagsAnswer = model(
  'BulkTagsAnswer',
  t.Object({
    updated: t.Array(t.Object({ id: t.String(), tags: t.Array(t.String(), { description: 'all its tags, sorted' }) })),
    skipped: t.Array(t.Object({ id: t.String(), reason: t.String() })),
  }),
)

const PropertyType = t.Union(
  [t.Literal('DateTime'), t.Literal('String'), t.Literal('Numeric'), t.Literal('Boolean'), t.Literal('Duration'), t.Null()],
  { description: 'the first type ingestion detected, or what the API set; null when no value had one' },
)

export const PropertyDefinition = model(
  'PropertyDefinition',
  t.Object({
    id: t.String({ format: 'uuid' }),
    name: t.String(),
    description: t.String(),
    tags: t.Array(t.String()),
    is_numerical: t.Boolean({ description: 'property_type is Numeric' }),
    property_type: PropertyType,
    is_seen_on_filtered_events: t.Union([t.Boolean(), t.Null()], { description: 'seen on one of event_names; null without event_names' }),
    verified: t.Boolean(),
    verified_at: DateTime,
    verified_by: t.Union([UserBasic, t.Null()]),
    hidden: t.Boolean(),
    updated_at: DateTime,
    updated_by: t.Union([UserBasic, t.Null()]),
  }),
)

export const PropertyDefinitionPage = pageModel('PropertyDefinitionPage', PropertyDefinition)

export const PropertyDefinitionChanges = model(
  'PropertyDefinitionChanges',
  t.Object(
    { description: t.Optional(t.String()), tags: t.Optional(tagList), property_type: t.Optional(PropertyType), ...curation },
    { description: 'any of these members (read-only members of the object are ignored, others refused)' },
  ),
)

export const SeenTogether = model(
  'SeenTogether',
  t.Record(t.String(), t.Boolean(), { description: 'for each event name asked about: whether the property was seen on it' }),
)
