// TypeBox schemas of experiments: what the service accepts (checked member by member in validation.ts), what the
// routes answer, and the ExperimentQuery node the query API hands to ExperimentsService.results().
import { t } from 'elysia'
import { model } from '../http/openapi'
import { pageModel } from '../http/pagination'

const nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()])

/** at most this many variants (PostHog's limit), `control` first */
export const MAX_VARIANTS = 20
/** at most this many metrics in `metrics` and in `metrics_secondary` */
export const MAX_METRICS = 10
/** at most this many steps in a funnel metric */
export const MAX_FUNNEL_STEPS = 10

/** What an events node and an actions node share besides what they count. */
const nodeMembers = {
  name: t.Optional(t.String({ maxLength: 400 })),
  custom_name: t.Optional(nullable(t.String({ maxLength: 400 }))),
  math: t.Optional(t.Union([t.Literal('total'), t.Literal('sum'), t.Literal('dau')], { description: 'total: events per person (default); sum: of math_property; dau: 1 if the person did it' })),
  math_property: t.Optional(t.String({ minLength: 1, maxLength: 400 })),
  properties: t.Optional(t.Array(t.Any(), { maxItems: 0, description: 'event filters are not supported yet: empty or absent' })),
}

export const EventsNode = model(
  'ExperimentEventsNode',
  t.Object(
    {
      kind: t.Literal('EventsNode'),
      event: t.String({ minLength: 1, maxLength: 400, description: 'the event counted' }),
      ...nodeMembers,
    },
    { additionalProperties: false },
  ),
)

export const ActionsNode = model(
  'ExperimentActionsNode',
  t.Object(
    {
      kind: t.Literal('ActionsNode'),
      id: t.Integer({ minimum: 0, maximum: 2_147_483_647, description: "the project's action counted (its events: those matching any of its steps)" }),
      ...nodeMembers,
    },
    { additionalProperties: false },
  ),
)

/** What a metric counts: an event's (EventsNode) or an action's (ActionsNode) events. */
const MetricNode = t.Union([EventsNode, ActionsNode])

export const ExperimentMetric = model(
  'ExperimentMetric',
  t.Object(
    {
      kind: t.Literal('ExperimentMetric'),
      metric_type: t.Union([t.Literal('mean'), t.Literal('funnel')]),
      name: t.Optional(nullable(t.String({ maxLength: 400 }))),
      uuid: t.Optional(t.String({ maxLength: 64 })),
      source: t.Optional(MetricNode),
      series: t.Optional(t.Array(MetricNode, { minItems: 1, maxItems: MAX_FUNNEL_STEPS, description: 'funnel steps after exposure' })),
      goal: t.Optional(t.Union([t.Literal('increase'), t.Literal('decrease')])),
      conversion_window: t.Optional(nullable(t.Integer({ minimum: 1, maximum: 100_000 }))),
      conversion_window_unit: t.Optional(nullable(t.Union(['second', 'minute', 'hour', 'day', 'week', 'month'].map((u) => t.Literal(u))))),
    },
    { additionalProperties: false, description: 'mean: `source` (an EventsNode or ActionsNode); funnel: `series` (steps after exposure)' },
  ),
)

export const Variant = t.Object({
  key: t.String({ minLength: 1, maxLength: 200 }),
  name: t.Optional(nullable(t.String({ maxLength: 400 }))),
  rollout_percentage: t.Integer({ minimum: 0, maximum: 100 }),
})

export const Parameters = t.Object(
  {
    feature_flag_variants: t.Optional(t.Array(Variant, { minItems: 2, maxItems: MAX_VARIANTS, description: '`control` first; percentages sum to 100' })),
    minimum_detectable_effect: t.Optional(nullable(t.Number({ exclusiveMinimum: 0, maximum: 1000, description: 'percent, relative to the baseline' }))),
  },
  { additionalProperties: true },
)

export const ExposureCriteria = t.Object(
  {
    filterTestAccounts: t.Optional(t.Boolean()),
    multiple_variant_handling: t.Optional(t.Union([t.Literal('exclude'), t.Literal('first_seen')])),
  },
  { additionalProperties: false },
)

export const StatsConfig = t.Object({ method: t.Optional(t.Union([t.Literal('bayesian'), t.Literal('frequentist')])) }, { additionalProperties: false })

export const Conclusion = t.Union(['won', 'lost', 'inconclusive', 'stopped_early', 'invalid'].map((c) => t.Literal(c)))

export const ExperimentWrite = model(
  'ExperimentWrite',
  t.Object({
    name: t.Optional(t.String({ minLength: 1, maxLength: 400 })),
    description: t.Optional(nullable(t.String({ maxLength: 3000 }))),
    feature_flag_key: t.Optional(t.String({ minLength: 1, maxLength: 400, description: 'the flag to make, or an existing multivariate flag (≥ 2 variants, control first)' })),
    parameters: t.Optional(Parameters),
    metrics: t.Optional(t.Array(ExperimentMetric, { maxItems: MAX_METRICS })),
    metrics_secondary: t.Optional(t.Array(ExperimentMetric, { maxItems: MAX_METRICS })),
    exposure_criteria: t.Optional(nullable(ExposureCriteria)),
    stats_config: t.Optional(nullable(StatsConfig)),
    start_date: t.Optional(nullable(t.String({ format: 'date-time', description: 'set to launch (the flag becomes active)' }))),
    end_date: t.Optional(nullable(t.String({ format: 'date-time', description: 'set to stop' }))),
    archived: t.Optional(t.Boolean()),
    deleted: t.Optional(t.Boolean()),
    conclusion: t.Optional(nullable(Conclusion)),
    conclusion_comment: t.Optional(nullable(t.String({ maxLength: 3000 }))),
  }),
)

export const Experiment = model(
  'Experiment',
  t.Object({
    id: t.Integer(),
    name: t.String(),
    description: t.String(),
    start_date: nullable(t.String({ format: 'date-time' })),
    end_date: nullable(t.String({ format: 'date-time' })),
    feature_flag_key: nullable(t.String()),
    feature_flag: t.Any({ description: 'the flag (read-only): id, key, name, filters, active, deleted' }),
    holdout: t.Null(),
    holdout_id: t.Null(),
    exposure_cohort: t.Null(),
    parameters: t.Any(),
    secondary_metrics: t.Array(t.Any()),
    saved_metrics: t.Array(t.Any()),
    saved_metrics_ids: t.Array(t.Any()),
    filters: t.Any(),
    archived: t.Boolean(),
    deleted: t.Boolean(),
    created_by: t.Any({ description: 'the user who created it, or null' }),
    created_at: nullable(t.String({ format: 'date-time' })),
    updated_at: nullable(t.String({ format: 'date-time' })),
    type: t.String(),
    exposure_criteria: t.Any(),
    metrics: t.Array(ExperimentMetric),
    metrics_secondary: t.Array(ExperimentMetric),
    stats_config: t.Any(),
    conclusion: nullable(t.String()),
    conclusion_comment: nullable(t.String()),
    status: t.Union([t.Literal('draft'), t.Literal('running'), t.Literal('complete')]),
  }),
)

export const ExperimentPage = pageModel('ExperimentPage', Experiment)

/** `{"kind": "ExperimentQuery", ...}` on POST /query/ (the query API routes this kind to ExperimentsService.results). */
export const ExperimentQueryNode = model(
  'ExperimentQuery',
  t.Object(
    {
      kind: t.Literal('ExperimentQuery'),
      experiment_id: t.Integer({ minimum: 1, maximum: 2_147_483_647 }),
      metric: t.Optional(nullable(ExperimentMetric)),
      name: t.Optional(nullable(t.String({ maxLength: 400 }))),
    },
    { additionalProperties: false, description: 'metric absent: the experiment\'s first metric' },
  ),
)

const VariantCounts = {
  key: t.String(),
  number_of_samples: t.Integer({ description: 'exposed persons' }),
  sum: t.Number({ description: 'sum of the per-person metric values (funnel: persons who completed it)' }),
  sum_squares: t.Number(),
  step_counts: t.Optional(t.Array(t.Integer(), { description: 'funnel: persons who reached each step' })),
}

export const ExperimentResults = model(
  'ExperimentResults',
  t.Object({
    kind: t.Literal('ExperimentQuery'),
    metric: ExperimentMetric,
    baseline: t.Object(VariantCounts),
    variant_results: t.Array(
      t.Object({
        ...VariantCounts,
        method: t.Union([t.Literal('bayesian'), t.Literal('frequentist')]),
        chance_to_win: t.Optional(nullable(t.Number())),
        credible_interval: t.Optional(nullable(t.Array(t.Number(), { minItems: 2, maxItems: 2 }))),
        p_value: t.Optional(nullable(t.Number())),
        confidence_interval: t.Optional(nullable(t.Array(t.Number(), { minItems: 2, maxItems: 2 }))),
        significant: t.Boolean(),
        validation_failures: t.Array(t.String()),
      }),
    ),
    recommended_sample_size: nullable(t.Integer({ description: 'per variant, for parameters.minimum_detectable_effect' })),
    exposures_excluded: t.Integer({ description: 'persons left out: seen in two variants ($multiple)' }),
    sampling_rate: t.Number({ description: 'the share of persons counted: 1, or the rate of a uniform sample by person id (past EXPERIMENT_MAX_EXPOSED_PERSONS or EXPERIMENT_MAX_METRIC_ROWS)' }),
    warnings: t.Array(
      t.Object(
        {
          type: t.String({ description: 'sampled, exposures_unexplained (more exposures than /decide answers for the flag explain), exposure_check_unavailable' }),
          message: t.String(),
        },
        { additionalProperties: true },
      ),
      { description: 'what the numbers rest on besides the counts: a sample, exposures that look flooded' },
    ),
    is_cached: t.Boolean(),
    last_refresh: t.String({ format: 'date-time' }),
  }),
)
