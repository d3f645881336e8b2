// /decide and /flags bodies once decoded, and their answers (shape by version: see the README).
import { t } from 'elysia'
import { model } from '../../http/openapi'

export const DecideBody = model(
  'DecideBody',
  t.Object(
    {
      api_key: t.Optional(t.String({ description: 'project token (phc_…), or a personal key with project_id' })),
      token: t.Optional(t.String()),
      project_id: t.Optional(t.Union([t.Integer(), t.String()])),
      distinct_id: t.Union([t.String(), t.Number()]),
      $anon_distinct_id: t.Optional(t.String()),
      groups: t.Optional(t.Record(t.String(), t.Union([t.String(), t.Number()]))),
      person_properties: t.Optional(t.Record(t.String(), t.Any())),
      group_properties: t.Optional(t.Record(t.String(), t.Record(t.String(), t.Any()))),
      flag_keys_to_evaluate: t.Optional(t.Array(t.String())),
    },
    { additionalProperties: true },
  ),
)

export const DecideAnswer = model(
  'DecideAnswer',
  t.Object(
    {
      featureFlags: t.Optional(t.Union([t.Array(t.String()), t.Record(t.String(), t.Union([t.Boolean(), t.String()]))])),
      featureFlagPayloads: t.Optional(t.Record(t.String(), t.Any())),
      flags: t.Optional(t.Record(t.String(), t.Any(), { description: 'v=4 and /flags: the detail of each flag' })),
      errorsWhileComputingFlags: t.Optional(t.Boolean()),
      quotaLimited: t.Optional(t.Array(t.String())),
    },
    { additionalProperties: true },
  ),
)
