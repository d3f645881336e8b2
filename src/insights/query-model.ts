// The query API's request and answer (named components of the OpenAPI document too). The node's own members are
// checked against its kind's schema (model.ts) by the service, so that an error names the member.
import { t } from 'elysia'
import { model } from '../http/openapi'

export const QueryRequest = model(
  'QueryRequest',
  t.Object(
    {
      query: t.Object(
        { kind: t.String({ maxLength: 64, description: 'HogQLQuery, TrendsQuery, FunnelsQuery, RetentionQuery, LifecycleQuery, StickinessQuery, EventsQuery, WebOverviewQuery, WebStatsTableQuery or ExperimentQuery' }) },
        { additionalProperties: true, description: 'a query node: {"kind": "HogQLQuery", "query": "SELECT …"}, or an insight kind (docs/insights.md)' },
      ),
      refresh: t.Optional(t.Any({ description: 'blocking (default: a recent cached answer may serve), force_blocking or true: computed now' })),
      client_query_id: t.Optional(t.String({ maxLength: 200 })),
    },
    { additionalProperties: true },
  ),
)

export const QueryResponse = model(
  'QueryResponse',
  t.Object(
    {
      results: t.Optional(
        t.Union([t.Array(t.Any()), t.Object({}, { additionalProperties: true })], {
          description: 'HogQL/EventsQuery: rows, each an array in column order; insights: their kind’s results (a funnel\'s time_to_convert view: {bins, average_conversion_time}; ExperimentQuery answers baseline and variant_results instead)',
        }),
      ),
      columns: t.Optional(t.Array(t.String())),
      types: t.Optional(t.Array(t.String())),
      hasMore: t.Optional(t.Boolean({ description: 'rows were cut: at the LIMIT, or at the answer\'s byte budget (QUERY_MAX_RESULT_BYTES; continue with OFFSET)' })),
      limit: t.Optional(t.Number()),
      offset: t.Optional(t.Number()),
      is_cached: t.Boolean(),
      last_refresh: t.String(),
      timezone: t.String(),
      resolved_date_range: t.Union([t.Object({ date_from: t.String(), date_to: t.String() }), t.Null()]),
      hogql: t.String({ description: 'the HogQL that ran (several statements separated by ";")' }),
    },
    { additionalProperties: true },
  ),
)
