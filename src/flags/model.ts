// TypeBox schemas of feature flags as the REST API and local evaluation render them (see serialize.ts), for the
// OpenAPI document. A flag's body is checked by the service (validation.ts), member by member, so that each error
// names its member in `attr` as PostHog's does; FlagWrite documents what it accepts.
import { t } from 'elysia'
import { model } from '../http/openapi'
import { pageModel } from '../http/pagination'
import { UserBasic } from '../definitions/model'

const nullable = <T extends ReturnType<typeof t.String> | ReturnType<typeof t.Number> | ReturnType<typeof t.Integer>>(schema: T) =>
  t.Union([schema, t.Null()])
const open = { additionalProperties: true }

export const FlagProperty = model(
  'FlagProperty',
  t.Object(
    {
      key: t.String({ description: 'property name; a cohort id for type cohort; a flag id for type flag' }),
      value: t.Optional(t.Unknown({ description: 'string, number, boolean or a list of them' })),
      operator: t.Optional(t.Union([t.String({ description: 'exact, is_not, icontains, regex, gt, is_set, in, flag_evaluates_to, …' }), t.Null()])),
      type: t.Optional(t.String({ description: 'person, group, cohort or flag' })),
      group_type_index: t.Optional(t.Union([t.Integer(), t.Null()])),
      negation: t.Optional(t.Boolean()),
    },
    open,
  ),
)

export const FlagCondition = model(
  'FlagCondition',
  t.Object(
    {
      properties: t.Optional(t.Union([t.Array(FlagProperty), t.Null()])),
      rollout_percentage: t.Optional(nullable(t.Number({ minimum: 0, maximum: 100 }))),
      variant: t.Optional(nullable(t.String())),
    },
    open,
  ),
)

export const FlagFilters = model(
  'FlagFilters',
  t.Object(
    {
      groups: t.Optional(t.Array(FlagCondition)),
      multivariate: t.Optional(
        t.Union([
          t.Object({ variants: t.Array(t.Object({ key: t.String(), name: t.Optional(nullable(t.String())), rollout_percentage: t.Number() }, open)) }, open),
          t.Null(),
        ]),
      ),
      payloads: t.Optional(t.Union([t.Record(t.String(), t.Unknown()), t.Null()], { description: 'by "true" or a variant key' })),
      aggregation_group_type_index: t.Optional(nullable(t.Integer())),
      super_groups: t.Optional(t.Union([t.Array(FlagCondition), t.Null()])),
      holdout_groups: t.Optional(t.Union([t.Array(FlagCondition), t.Null()])),
    },
    open,
  ),
)

export const Flag = model(
  'Flag',
  t.Object({
    id: t.Integer(),
    name: t.String(),
    key: t.String(),
    filters: FlagFilters,
    deleted: t.Boolean(),
    active: t.Boolean(),
    created_by: t.Union([UserBasic, t.Null()]),
    created_at: t.String({ format: 'date-time' }),
    updated_at: t.String({ format: 'date-time' }),
    version: t.Integer(),
    last_modified_by: t.Union([UserBasic, t.Null()]),
    is_simple_flag: t.Boolean(),
    rollout_percentage: nullable(t.Number()),
    ensure_experience_continuity: t.Boolean(),
    experiment_set: t.Array(t.Integer()),
    surveys: t.Array(t.Unknown()),
    features: t.Array(t.Unknown()),
    can_edit: t.Boolean(),
    tags: t.Array(t.String()),
    is_remote_configuration: t.Boolean(),
    has_encrypted_payloads: t.Boolean(),
    evaluation_runtime: t.String(),
  }),
)

export const FlagPage = pageModel('FlagPage', Flag)

export const FlagWrite = model(
  'FlagWrite',
  t.Object(
    {
      key: t.Optional(t.String({ maxLength: 400, description: 'letters, digits, - and _; unique in the project (required to create)' })),
      name: t.Optional(t.String({ description: 'a description' })),
      filters: t.Optional(FlagFilters),
      active: t.Optional(t.Boolean()),
      deleted: t.Optional(t.Boolean({ description: 'true deletes the flag (DELETE is not allowed)' })),
      ensure_experience_continuity: t.Optional(t.Boolean()),
      rollout_percentage: t.Optional(nullable(t.Number({ minimum: 0, maximum: 100 }))),
    },
    { description: 'members of PostHog’s feature flag; unknown members are ignored' },
  ),
)

export const LocalEvaluationFlag = model(
  'LocalEvaluationFlag',
  t.Object(
    {
      id: t.Integer(),
      team_id: t.Integer(),
      name: t.String(),
      key: t.String(),
      filters: FlagFilters,
      deleted: t.Boolean(),
      active: t.Boolean(),
      ensure_experience_continuity: t.Boolean(),
      has_encrypted_payloads: t.Boolean(),
      version: t.Integer(),
      evaluation_runtime: t.String(),
      evaluation_tags: t.Array(t.String()),
    },
    open,
  ),
)

export const LocalEvaluationAnswer = model(
  'LocalEvaluationAnswer',
  t.Object({
    flags: t.Array(LocalEvaluationFlag),
    group_type_mapping: t.Record(t.String(), t.String(), { description: 'group type index → group type' }),
    cohorts: t.Record(t.String(), t.Unknown(), { description: 'cohort id → its property group (with ?send_cohorts)' }),
  }),
)
