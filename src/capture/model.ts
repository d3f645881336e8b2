// The capture endpoints' bodies and answer, as clients send them once decoded (gzip, lz64, base64, form data=).
import { t } from 'elysia'
import { model } from '../http/openapi'

export const CaptureEvent = model(
  'CaptureEvent',
  t.Object(
    {
      event: t.String({ description: 'event name, e.g. $pageview' }),
      distinct_id: t.Optional(t.Union([t.String(), t.Number(), t.Boolean()], { description: 'who did it (or properties.distinct_id)' })),
      properties: t.Optional(t.Record(t.String(), t.Any())),
      timestamp: t.Optional(t.String({ description: 'ISO 8601; corrected by sent_at/offset' })),
      uuid: t.Optional(t.String({ format: 'uuid' })),
      api_key: t.Optional(t.String({ description: 'project token (phc_…), or a personal key with project_id' })),
      token: t.Optional(t.String()),
      $set: t.Optional(t.Record(t.String(), t.Any())),
      $set_once: t.Optional(t.Record(t.String(), t.Any())),
    },
    { additionalProperties: true },
  ),
)

export const CaptureBody = model(
  'CaptureBody',
  t.Union([
    CaptureEvent,
    t.Array(CaptureEvent),
    t.Object(
      {
        api_key: t.Optional(t.String()),
        token: t.Optional(t.String()),
        project_id: t.Optional(t.Union([t.Integer(), t.String()])),
        sent_at: t.Optional(t.String()),
        batch: t.Array(CaptureEvent),
      },
      { additionalProperties: true },
    ),
  ]),
)

export const CaptureOk = model('CaptureOk', t.Object({ status: t.Literal(1) }))
