// Session replay's bodies and answers (they feed the OpenAPI document): the /s/ body posthog-js sends, PostHog's
// recordings list item, and the snapshot sources.
import { t } from 'elysia'
import { model } from '../http/openapi'

const SnapshotEvent = t.Object(
  {
    event: t.String({ description: '$snapshot' }),
    distinct_id: t.Optional(t.Union([t.String(), t.Number()])),
    properties: t.Object(
      {
        $session_id: t.String({ maxLength: 70, pattern: '^[A-Za-z0-9-]+$' }),
        $window_id: t.Optional(t.String({ maxLength: 70, pattern: '^[A-Za-z0-9-]+$' })),
        $snapshot_data: t.Union([t.Array(t.Record(t.String(), t.Any())), t.Record(t.String(), t.Any())], { description: 'rrweb events (eventWithTime), kept as sent' }),
        token: t.Optional(t.String({ description: 'project token (phc_…)' })),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
)

export const RecordingBody = model('RecordingBody', t.Union([SnapshotEvent, t.Array(SnapshotEvent)]))

export const RecordingOk = model(
  'RecordingOk',
  t.Object({
    status: t.Literal(1),
    quota_limited: t.Optional(t.Array(t.Literal('recordings'), { description: "present when the request was dropped past a session's or the project's daily byte budget" })),
  }),
)

const MinimalPerson = t.Object({
  id: t.String({ description: "the person's uuid" }),
  distinct_ids: t.Array(t.String()),
  properties: t.Record(t.String(), t.Any()),
})

export const SessionRecording = model(
  'SessionRecording',
  t.Object({
    id: t.String({ description: 'the session id' }),
    distinct_id: t.String(),
    viewed: t.Boolean(),
    recording_duration: t.Number({ description: 'seconds from the first to the last event' }),
    active_seconds: t.Number(),
    inactive_seconds: t.Number(),
    start_time: t.String({ format: 'date-time' }),
    end_time: t.String({ format: 'date-time' }),
    click_count: t.Integer(),
    keypress_count: t.Integer(),
    mouse_activity_count: t.Integer(),
    console_log_count: t.Integer(),
    console_warn_count: t.Integer(),
    console_error_count: t.Integer(),
    start_url: t.Union([t.String(), t.Null()]),
    person: t.Union([MinimalPerson, t.Null()]),
    retention_period_days: t.Integer(),
    expiry_time: t.String({ format: 'date-time' }),
    storage: t.String({ description: 'object_storage (blocks kept by phog)' }),
    snapshot_source: t.String({ description: 'web or mobile' }),
    snapshot_library: t.Union([t.String(), t.Null()]),
    event_count: t.Integer(),
    size: t.Integer({ description: 'bytes of its JSON lines' }),
    ongoing: t.Boolean(),
  }),
)

export const SessionRecordingPage = model(
  'SessionRecordingPage',
  t.Object({ results: t.Array(SessionRecording), has_next: t.Boolean(), version: t.Integer() }),
)

export const SnapshotSources = model(
  'SnapshotSources',
  t.Object({
    sources: t.Array(
      t.Object({
        source: t.Literal('blob_v2'),
        start_timestamp: t.String({ format: 'date-time' }),
        end_timestamp: t.String({ format: 'date-time' }),
        blob_key: t.String({ description: "the block's index" }),
      }),
    ),
  }),
)
