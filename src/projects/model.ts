// TypeBox schemas of projects and personal keys: the routes validate with them and the OpenAPI document shows them.
import { t } from 'elysia'
import { model } from '../http/openapi'

export const Project = model('Project', t.Object(
  {
    id: t.Integer(),
    uuid: t.String({ format: 'uuid' }),
    organization: t.String({ format: 'uuid' }),
    name: t.String(),
    api_token: t.Union([t.String(), t.Null()], {
      description: 'the project token (phc_…), public by design; null for a project migrated from hashed tokens until a request presents its token',
    }),
    api_token_hint: t.String({ description: 'first and last four characters of the token' }),
    created_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
    timezone: t.String({ description: 'IANA name (e.g. "Europe/Berlin"): insights bucket, label and resolve relative dates in it' }),
    week_start_day: t.Integer({ minimum: 0, maximum: 1, description: 'first day of a week in insights: 0 Sunday, 1 Monday' }),
  },
))

/** The project's settings a PATCH may change; checked member by member by the service (attr names the member). */
export const ProjectUpdate = model('ProjectUpdate', t.Object(
  {
    timezone: t.Optional(t.String({ maxLength: 64, description: 'an IANA timezone name, or "UTC"' })),
    week_start_day: t.Optional(t.Union([t.Literal(0), t.Literal(1), t.Null()], { description: '0 Sunday, 1 Monday; null: Sunday' })),
  },
  { additionalProperties: true, description: 'the other members of the project’s answer are ignored; any other member is refused' },
))

export const PersonalApiKey = model('PersonalApiKey', t.Object(
  {
    id: t.String({ format: 'uuid' }),
    label: t.String({ maxLength: 40 }),
    value: t.Union([t.String(), t.Null()], { description: 'the key itself: only in the answers to create and roll' }),
    mask_value: t.String({ description: 'phx_...abcd' }),
    created_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
    last_used_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
    last_rolled_at: t.Union([t.String({ format: 'date-time' }), t.Null()]),
    user_id: t.Integer(),
    scopes: t.Array(t.String()),
    scoped_teams: t.Union([t.Array(t.Integer()), t.Null()]),
    scoped_organizations: t.Union([t.Array(t.String()), t.Null()]),
  },
))

export const PersonalApiKeyList = model('PersonalApiKeyList', t.Array(PersonalApiKey, { description: 'the keys of the key’s user' }))

/** label and scopes are checked by the service, to answer PostHog's codes (required, blank, max_length). */
export const PersonalApiKeyCreate = model('PersonalApiKeyCreate', t.Object(
  {
    label: t.Optional(t.String({ maxLength: 1000, description: 'at most 40 characters' })),
    scopes: t.Optional(t.Array(t.String({ maxLength: 100 }), { maxItems: 100, description: '["*"] or "<object>:read|write"' })),
    scoped_teams: t.Optional(t.Union([t.Array(t.Integer(), { maxItems: 100 }), t.Null()], { description: 'project ids the key is limited to (null: all)' })),
    scoped_organizations: t.Optional(t.Union([t.Array(t.String({ maxLength: 64 }), { maxItems: 100 }), t.Null()], { description: 'organization ids the key is limited to (null: all)' })),
  },
  { additionalProperties: true },
))

export const ProjectPage = model(
  'ProjectPage',
  t.Object({
    count: t.Integer(),
    next: t.Union([t.String(), t.Null()]),
    previous: t.Union([t.String(), t.Null()]),
    results: t.Array(Project),
  }),
)
