// The query API's request and answer (named components of the OpenAPI document too).
import { t } from 'elysia'
import { model } from '../http/openapi'

export const QueryRequest = model(
  'QueryRequest',
  t.Object(
    {
      query: t.Object(
        {
          kind: t.Literal('HogQLQuery', { description: 'the only kind served' }),
          query: t.String({ minLength: 1, maxLength: 1024 * 1024, description: 'SELECT … FROM events … (see docs/query.md)' }),
        },
        { additionalProperties: true },
      ),
      refresh: t.Optional(t.Any()),
      client_query_id: t.Optional(t.String()),
    },
    { additionalProperties: true },
  ),
)

export const QueryResponse = model(
  'QueryResponse',
  t.Object({
    results: t.Array(t.Array(t.Any()), { description: 'rows, each an array in column order' }),
    columns: t.Array(t.String()),
    types: t.Array(t.String()),
    hasMore: t.Boolean({ description: 'rows were cut: at the LIMIT, or at the answer\'s byte budget (QUERY_MAX_RESULT_BYTES; continue with OFFSET)' }),
    limit: t.Number(),
    offset: t.Number(),
  }),
)
