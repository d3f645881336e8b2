// TypeBox schemas of projects and personal keys: the routes validate with them and the OpenAPI document shows them.
import { t } from 'elysia'
import { model } from '../http/openapi'

const UrlTriggers = t.Union([
  t.Array(t.Object({ url: t.String({ maxLength: 1000, description: 'a regular expression posthog-js matches the page URL with' }), matching: t.Literal('regex') }), { maxItems: 100 }),
  t.Null(),
])

/** Session replay settings, PostHog's team fields (the remote config, /flags and /decide answer them to posthog-js). */
const recordingMembers = {
  session_recording_opt_in: t.Boolean({ description: 'posthog-js records sessions (off by default)' }),
  session_recording_sample_rate: t.Union([t.String({ pattern: '^[01]\\.\\d\\d$' }), t.Null()], { description: 'share of sessions recorded, "0.00".."1.00" (a number is accepted on PATCH); null: every session' }),
  session_recording_minimum_duration_milliseconds: t.Union([t.Integer({ minimum: 0, maximum: 30000 }), t.Null()], { description: 'sessions shorter than this are not sent' }),
  session_recording_linked_flag: t.Union([
    t.Object({ id: t.Integer(), key: t.String({ maxLength: 400 }), variant: t.Optional(t.Union([t.String({ maxLength: 400 }), t.Null()])) }),
    t.Null(),
  ], { description: 'record only users for whom this flag (or variant) is on' }),
  session_recording_network_payload_capture_config: t.Union([t.Object({ recordHeaders: t.Optional(t.Boolean()), recordBody: t.Optional(t.Boolean()) }), t.Null()]),
  session_recording_masking_config: t.Union([
    t.Object({ maskAllInputs: t.Optional(t.Boolean()), maskTextSelector: t.Optional(t.String({ maxLength: 1000 })), blockSelector: t.Optional(t.String({ maxLength: 1000 })) }),
    t.Null(),
  ]),
  session_recording_url_trigger_config: UrlTriggers,
  session_recording_url_blocklist_config: UrlTriggers,
  session_recording_event_trigger_config: t.Union([t.Array(t.String({ maxLength: 400 }), { maxItems: 100 }), t.Null()], { description: 'events that start recording' }),
  session_recording_trigger_match_type_config: t.Union([t.Literal('any'), t.Literal('all'), t.Null()]),
  capture_console_log_opt_in: t.Union([t.Boolean(), t.Null()], { description: 'recordings carry the console log (default true)' }),
  capture_performance_opt_in: t.Union([t.Boolean(), t.Null()], { description: 'recordings carry network timing (default true)' }),
  session_recording_retention_days: t.Integer({ minimum: 1, maximum: 3650, description: 'recordings are kept this many days (default 30)' }),
  autocapture_exceptions_opt_in: t.Union([t.Boolean(), t.Null()], { description: "error tracking: posthog-js captures uncaught errors on its own (the remote config's errorTracking.autocaptureExceptions)" }),
}

const optionalRecordingMembers = t.Partial(t.Object(recordingMembers)).properties

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
    ...recordingMembers,
  },
))

/** The project's settings a PATCH may change; checked member by member by the service (attr names the member). */
export const ProjectUpdate = model('ProjectUpdate', t.Object(
  {
    timezone: t.Optional(t.String({ maxLength: 64, description: 'an IANA timezone name, or "UTC"' })),
    week_start_day: t.Optional(t.Union([t.Literal(0), t.Literal(1), t.Null()], { description: '0 Sunday, 1 Monday; null: Sunday' })),
    ...optionalRecordingMembers,
    session_recording_sample_rate: t.Optional(t.Union([t.String({ maxLength: 16 }), t.Number({ minimum: 0, maximum: 1 }), t.Null()], { description: '"0.50" or 0.5: at most two decimals, 0 to 1; null: every session' })),
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
