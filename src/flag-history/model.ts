// TypeBox schemas of a flag's change history (PostHog's activity log entries of a feature flag).
import { t } from 'elysia'
import { model } from '../http/openapi'

export const FlagChange = model(
  'FlagChange',
  t.Object({
    id: t.String({ description: 'the entry, newest first' }),
    activity: t.Union([t.Literal('created'), t.Literal('updated'), t.Literal('deleted'), t.Literal('restored')]),
    scope: t.Literal('FeatureFlag'),
    item_id: t.String(),
    user: t.Union([t.Object({ id: t.Integer(), email: t.String(), first_name: t.String() }), t.Null()], { description: 'who made the change, when known' }),
    detail: t.Object({
      name: t.String({ description: 'the flag key after the change' }),
      version: t.Integer(),
      changes: t.Array(
        t.Object({
          type: t.Literal('FeatureFlag'),
          action: t.Union([t.Literal('created'), t.Literal('changed')]),
          field: t.String(),
          before: t.Unknown(),
          after: t.Unknown(),
        }),
      ),
    }),
    created_at: t.String({ format: 'date-time' }),
  }),
)

export const FlagChangePage = model(
  'FlagChangePage',
  t.Object({
    results: t.Array(FlagChange),
    next: t.Union([t.String(), t.Null()]),
    previous: t.Union([t.String(), t.Null()]),
  }),
)
