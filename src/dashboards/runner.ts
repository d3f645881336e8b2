// How an insight's result is computed: a runner given the saved query's source node (the wrapper taken off) that
// answers what the query API answers for it. The composition root chooses the runner.
import { errors } from '../http/errors'

export interface InsightQueryRunner {
  run(teamId: number, query: unknown, options: { refresh: boolean; signal?: AbortSignal }): Promise<Record<string, unknown>>
}

/** The query API's HogQL runner, as the only kind served for now: any other kind is a 400 naming `query`. */
export function hogqlInsightRunner(
  runHogQL: (teamId: number, text: string, signal?: AbortSignal) => Promise<object>,
): InsightQueryRunner {
  return {
    async run(teamId, query, { signal }) {
      const node = query as { kind?: unknown; query?: unknown } | null
      if (node?.kind !== 'HogQLQuery') {
        throw errors.validation('unsupported_query_kind', `Insights of kind ${JSON.stringify(String(node?.kind ?? '')).slice(0, 80)} cannot be computed yet: only HogQLQuery sources are.`, 'query')
      }
      if (typeof node.query !== 'string' || node.query === '') throw errors.validation('required', 'A HogQLQuery needs its "query" text.', 'query')
      return { ...(await runHogQL(teamId, node.query, signal)) }
    },
  }
}
