// PostHog's insight query nodes, as phog reads them. Unknown members are refused by name, as PostHog's models do;
// members PostHog's app sends that change nothing here (display hints, its own caching knobs) are accepted.
import { t, type Static, type TSchema } from 'elysia'

const Name = t.String({ maxLength: 400 })
const PropertyValue = t.Union([t.String({ maxLength: 4096 }), t.Number(), t.Boolean(), t.Null(), t.Array(t.Union([t.String({ maxLength: 4096 }), t.Number(), t.Boolean()]), { maxItems: 1000 })])

export const PropertyOperator = t.Union(
  ['exact', 'is_not', 'icontains', 'not_icontains', 'regex', 'not_regex', 'gt', 'gte', 'lt', 'lte', 'is_set', 'is_not_set', 'is_date_before', 'is_date_after', 'is_date_exact', 'in', 'not_in'].map((o) => t.Literal(o)),
)

export const PropertyFilter = t.Object(
  {
    key: t.Union([t.String({ minLength: 1, maxLength: 400 }), t.Number()]),
    value: t.Optional(PropertyValue),
    operator: t.Optional(t.Union([PropertyOperator, t.Null()])),
    type: t.Optional(t.Union(['event', 'person', 'cohort', 'precalculated-cohort', 'static-cohort'].map((k) => t.Literal(k)))),
    label: t.Optional(t.Any()),
    cohort_name: t.Optional(t.Any()),
  },
  { additionalProperties: false },
)
export type PropertyFilter = Static<typeof PropertyFilter>

/** `properties`: a flat list (AND), or PostHog's group form with one level of AND/OR groups. */
const PropertyGroup = t.Object(
  {
    type: t.Union([t.Literal('AND'), t.Literal('OR')]),
    values: t.Array(t.Union([PropertyFilter, t.Object({ type: t.Union([t.Literal('AND'), t.Literal('OR')]), values: t.Array(PropertyFilter, { maxItems: 100 }) }, { additionalProperties: false })]), { maxItems: 100 }),
  },
  { additionalProperties: false },
)
export const Properties = t.Union([t.Array(PropertyFilter, { maxItems: 100 }), PropertyGroup, t.Null()])

export const MathKind = t.Union(
  ['total', 'dau', 'weekly_active', 'monthly_active', 'unique_session', 'unique_group', 'sum', 'avg', 'min', 'max', 'median', 'p75', 'p90', 'p95', 'p99'].map((m) => t.Literal(m)),
)

export const EventsNode = t.Object(
  {
    kind: t.Literal('EventsNode'),
    event: t.Optional(t.Union([t.String({ maxLength: 400 }), t.Null()])),
    name: t.Optional(t.Union([Name, t.Null()])),
    custom_name: t.Optional(t.Union([Name, t.Null()])),
    math: t.Optional(t.Union([MathKind, t.Null()])),
    math_property: t.Optional(t.Union([t.String({ maxLength: 400 }), t.Null()])),
    math_property_type: t.Optional(t.Any()),
    math_group_type_index: t.Optional(t.Any()),
    properties: t.Optional(Properties),
    fixedProperties: t.Optional(t.Any()),
    limit: t.Optional(t.Any()),
    orderBy: t.Optional(t.Any()),
    response: t.Optional(t.Any()),
  },
  { additionalProperties: false },
)
export type EventsNode = Static<typeof EventsNode>

/**
 * A series or funnel step counting the events of one of the project's actions (src/actions/): PostHog's
 * ActionsNode. `event` is absent from it by type (an action names its events in its steps), so that a runner reads
 * what both nodes carry alike.
 */
export const ActionsNode = t.Object(
  {
    kind: t.Literal('ActionsNode'),
    id: t.Integer({ minimum: 0, maximum: 2_147_483_647 }),
    event: t.Optional(t.Undefined()),
    name: t.Optional(t.Union([Name, t.Null()])),
    custom_name: t.Optional(t.Union([Name, t.Null()])),
    math: t.Optional(t.Union([MathKind, t.Null()])),
    math_property: t.Optional(t.Union([t.String({ maxLength: 400 }), t.Null()])),
    math_property_type: t.Optional(t.Any()),
    math_group_type_index: t.Optional(t.Any()),
    properties: t.Optional(Properties),
    fixedProperties: t.Optional(t.Any()),
    response: t.Optional(t.Any()),
  },
  { additionalProperties: false },
)
export type ActionsNode = Static<typeof ActionsNode>

/** A trends series or funnel step: an event's (EventsNode) or an action's (ActionsNode). */
const SeriesNodeSchema = t.Union([EventsNode, ActionsNode])
export type SeriesNode = EventsNode | ActionsNode

/** A series of the kinds that count persons only (lifecycle, stickiness): unique_group is not one of their maths. */
const PersonsMath = t.Optional(t.Union([t.Union(MathKind.anyOf.filter((m) => m.const !== 'unique_group')), t.Null()]))
const PersonsEventsNode = t.Union([
  t.Object({ ...EventsNode.properties, math: PersonsMath }, { additionalProperties: false }),
  t.Object({ ...ActionsNode.properties, math: PersonsMath }, { additionalProperties: false }),
])

export const DateRange = t.Object(
  {
    date_from: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()])),
    date_to: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()])),
    explicitDate: t.Optional(t.Union([t.Boolean(), t.Null()])),
  },
  { additionalProperties: false },
)

export const BreakdownFilter = t.Object(
  {
    // a list: cohort ids (or "all") of a cohort breakdown
    breakdown: t.Optional(t.Union([t.String({ maxLength: 400 }), t.Number(), t.Array(t.Union([t.Integer(), t.Literal('all')]), { minItems: 1, maxItems: 25 }), t.Null()])),
    breakdown_type: t.Optional(t.Union([t.Literal('event'), t.Literal('person'), t.Literal('group'), t.Literal('cohort'), t.Null()])),
    breakdown_limit: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 1000 }), t.Null()])),
    breakdown_hide_other_aggregation: t.Optional(t.Union([t.Boolean(), t.Null()])),
    breakdown_normalize_url: t.Optional(t.Any()),
    breakdown_histogram_bin_count: t.Optional(t.Any()),
    breakdown_group_type_index: t.Optional(t.Any()),
  },
  { additionalProperties: false },
)

/** Funnels and retention count groups of this type instead of persons (null: persons). */
const AggregationGroup = t.Optional(t.Union([t.Integer({ minimum: 0, maximum: 4 }), t.Null()]))

/** The interval of a kind's buckets. */
const IntervalMember = t.Optional(t.Union([t.Literal('hour'), t.Literal('day'), t.Literal('week'), t.Literal('month'), t.Null()]))
/** The previous period beside the range (`compare_to`: how far back, e.g. -1w). */
export const CompareFilter = t.Optional(t.Union([t.Object({ compare: t.Optional(t.Union([t.Boolean(), t.Null()])), compare_to: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()])) }, { additionalProperties: false }), t.Null()]))

/** Members every insight query node may carry. */
const Common = {
  dateRange: t.Optional(t.Union([DateRange, t.Null()])),
  properties: t.Optional(Properties),
  filterTestAccounts: t.Optional(t.Union([t.Boolean(), t.Null()])),
  samplingFactor: t.Optional(t.Any()),
  modifiers: t.Optional(t.Any()),
  aggregation_group_type_index: t.Optional(t.Union([t.Null()])),
  response: t.Optional(t.Any()),
  version: t.Optional(t.Any()),
  tags: t.Optional(t.Any()),
  dataColorTheme: t.Optional(t.Any()),
}

export const TrendsQuery = t.Object(
  {
    kind: t.Literal('TrendsQuery'),
    series: t.Array(SeriesNodeSchema, { minItems: 1, maxItems: 20 }),
    interval: IntervalMember,
    breakdownFilter: t.Optional(t.Union([BreakdownFilter, t.Null()])),
    trendsFilter: t.Optional(
      t.Union([
        t.Object(
          {
            display: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()])),
            formula: t.Optional(t.Union([t.String({ maxLength: 1000 }), t.Null()])),
            formulas: t.Optional(t.Union([t.Array(t.String({ maxLength: 1000 }), { maxItems: 10 }), t.Null()])),
            formulaNodes: t.Optional(t.Union([t.Array(t.Object({ formula: t.String({ maxLength: 1000 }), custom_name: t.Optional(t.Any()) }, { additionalProperties: false }), { maxItems: 10 }), t.Null()])),
          },
          // display options of PostHog's app (legends, axes, smoothing…) change nothing in the answer
          { additionalProperties: true },
        ),
        t.Null(),
      ]),
    ),
    compareFilter: CompareFilter,
    conversionGoal: t.Optional(t.Any()),
    ...Common,
  },
  { additionalProperties: false },
)
export type TrendsQuery = Static<typeof TrendsQuery>

export const FunnelsQuery = t.Object(
  {
    kind: t.Literal('FunnelsQuery'),
    series: t.Array(SeriesNodeSchema, { minItems: 2, maxItems: 20 }),
    interval: IntervalMember,
    breakdownFilter: t.Optional(t.Union([BreakdownFilter, t.Null()])),
    funnelsFilter: t.Optional(
      t.Union([
        t.Object(
          {
            funnelWindowInterval: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 100_000 }), t.Null()])),
            funnelWindowIntervalUnit: t.Optional(t.Union([...['second', 'minute', 'hour', 'day', 'week', 'month'].map((u) => t.Literal(u)), t.Null()])),
            funnelOrderType: t.Optional(t.Union([t.Literal('ordered'), t.Literal('strict'), t.Literal('unordered'), t.Null()])),
            funnelVizType: t.Optional(t.Union([t.Literal('steps'), t.Literal('trends'), t.Literal('time_to_convert'), t.Null()])),
            exclusions: t.Optional(
              t.Union([
                t.Array(
                  t.Object(
                    { kind: t.Literal('EventsNode'), event: t.Optional(t.Union([t.String({ maxLength: 400 }), t.Null()])), funnelFromStep: t.Integer({ minimum: 0 }), funnelToStep: t.Integer({ minimum: 0 }), name: t.Optional(t.Any()), properties: t.Optional(Properties) },
                    { additionalProperties: false },
                  ),
                  { maxItems: 20 },
                ),
                t.Null(),
              ]),
            ),
            breakdownAttributionType: t.Optional(t.Union([t.Literal('first_touch'), t.Literal('last_touch'), t.Literal('all_events'), t.Literal('step'), t.Null()])),
            breakdownAttributionValue: t.Optional(t.Any()),
            funnelFromStep: t.Optional(t.Union([t.Integer({ minimum: 0 }), t.Null()])),
            funnelToStep: t.Optional(t.Union([t.Integer({ minimum: 0 }), t.Null()])),
            binCount: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 90 }), t.Null()])),
          },
          // display options of PostHog's app change nothing in the answer
          { additionalProperties: true },
        ),
        t.Null(),
      ]),
    ),
    ...Common,
    aggregation_group_type_index: AggregationGroup,
  },
  { additionalProperties: false },
)
export type FunnelsQuery = Static<typeof FunnelsQuery>

const Entity = t.Object(
  { id: t.Optional(t.Union([t.String({ maxLength: 400 }), t.Number(), t.Null()])), type: t.Optional(t.Union([t.Literal('events'), t.Literal('actions'), t.Null()])), name: t.Optional(t.Any()), order: t.Optional(t.Any()), uuid: t.Optional(t.Any()), kind: t.Optional(t.Any()), properties: t.Optional(Properties) },
  { additionalProperties: false },
)

export const RetentionQuery = t.Object(
  {
    kind: t.Literal('RetentionQuery'),
    retentionFilter: t.Object(
      {
        targetEntity: t.Optional(Entity),
        returningEntity: t.Optional(Entity),
        period: t.Optional(t.Union([t.Literal('Hour'), t.Literal('Day'), t.Literal('Week'), t.Literal('Month'), t.Null()])),
        totalIntervals: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 100 }), t.Null()])),
        retentionType: t.Optional(t.Union([t.Literal('retention_first_time'), t.Literal('retention_recurring'), t.Null()])),
      },
      // display options of PostHog's app change nothing in the answer
      { additionalProperties: true },
    ),
    breakdownFilter: t.Optional(t.Union([BreakdownFilter, t.Null()])),
    ...Common,
    aggregation_group_type_index: AggregationGroup,
  },
  { additionalProperties: false },
)
export type RetentionQuery = Static<typeof RetentionQuery>

export const EventsQuery = t.Object(
  {
    kind: t.Literal('EventsQuery'),
    select: t.Array(t.String({ minLength: 1, maxLength: 4096 }), { minItems: 1, maxItems: 100 }),
    where: t.Optional(t.Union([t.Array(t.String({ minLength: 1, maxLength: 4096 }), { maxItems: 100 }), t.Null()])),
    orderBy: t.Optional(t.Union([t.Array(t.String({ minLength: 1, maxLength: 4096 }), { maxItems: 20 }), t.Null()])),
    event: t.Optional(t.Union([t.String({ maxLength: 400 }), t.Null()])),
    properties: t.Optional(Properties),
    fixedProperties: t.Optional(t.Any()),
    after: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()])),
    before: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()])),
    limit: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 50_000 }), t.Null()])),
    offset: t.Optional(t.Union([t.Integer({ minimum: 0, maximum: 10_000_000 }), t.Null()])),
    personId: t.Optional(t.Union([t.String({ maxLength: 64 }), t.Null()])),
    filterTestAccounts: t.Optional(t.Union([t.Boolean(), t.Null()])),
    modifiers: t.Optional(t.Any()),
    response: t.Optional(t.Any()),
    tags: t.Optional(t.Any()),
    source: t.Optional(t.Any()),
  },
  { additionalProperties: false },
)
export type EventsQuery = Static<typeof EventsQuery>

export const HogQLQuery = t.Object(
  {
    kind: t.Literal('HogQLQuery'),
    query: t.String({ minLength: 1, maxLength: 1024 * 1024, description: 'SELECT … FROM events … (see docs/query.md)' }),
    values: t.Optional(t.Any()),
    filters: t.Optional(t.Any()),
    modifiers: t.Optional(t.Any()),
    response: t.Optional(t.Any()),
    name: t.Optional(t.Any()),
    explain: t.Optional(t.Any()),
    tags: t.Optional(t.Any()),
    variables: t.Optional(t.Any()),
  },
  // as before insights: scripts written for the query API may carry members of their own
  { additionalProperties: true },
)

export const LifecycleQuery = t.Object(
  {
    kind: t.Literal('LifecycleQuery'),
    // PostHog's app sends one; more are refused by the runner, by name
    series: t.Array(PersonsEventsNode, { minItems: 1, maxItems: 20 }),
    interval: IntervalMember,
    lifecycleFilter: t.Optional(
      t.Union([
        t.Object(
          {
            // which statuses PostHog's app draws: every status is answered, as PostHog does
            toggledLifecycles: t.Optional(t.Union([t.Array(t.Union(['new', 'returning', 'resurrecting', 'dormant'].map((s) => t.Literal(s))), { maxItems: 4 }), t.Null()])),
          },
          // display options of PostHog's app (showValuesOnSeries, showLegend, stacked…) change nothing in the answer
          { additionalProperties: true },
        ),
        t.Null(),
      ]),
    ),
    ...Common,
  },
  { additionalProperties: false },
)
export type LifecycleQuery = Static<typeof LifecycleQuery>

export const StickinessQuery = t.Object(
  {
    kind: t.Literal('StickinessQuery'),
    series: t.Array(PersonsEventsNode, { minItems: 1, maxItems: 20 }),
    interval: IntervalMember,
    intervalCount: t.Optional(t.Union([t.Integer({ minimum: 1, maximum: 1000 }), t.Null()])),
    stickinessFilter: t.Optional(
      t.Union([
        t.Object(
          {
            computedAs: t.Optional(t.Union([t.Literal('non_cumulative'), t.Literal('cumulative'), t.Null()])),
            stickinessCriteria: t.Optional(
              t.Union([
                t.Object({ operator: t.Union([t.Literal('gte'), t.Literal('lte'), t.Literal('exact')]), value: t.Integer({ minimum: 0, maximum: 1_000_000 }) }, { additionalProperties: false }),
                t.Null(),
              ]),
            ),
          },
          // display options of PostHog's app change nothing in the answer
          { additionalProperties: true },
        ),
        t.Null(),
      ]),
    ),
    compareFilter: CompareFilter,
    ...Common,
  },
  { additionalProperties: false },
)
export type StickinessQuery = Static<typeof StickinessQuery>

/** The schema of each kind served, by name (the query node is checked against it before anything else). */
export const QUERY_KINDS: Record<string, TSchema> = {
  HogQLQuery,
  TrendsQuery,
  FunnelsQuery,
  RetentionQuery,
  EventsQuery,
  LifecycleQuery,
  StickinessQuery,
}
