// How an insight's result is computed: a runner given the saved query's source node (the wrapper taken off) that
// answers what the query API answers for it, in the project's timezone. The composition root wires the query API's
// own service (src/services.ts).
import type { ProjectContext } from './insight-service'

export interface InsightQueryRunner {
  run(project: ProjectContext, query: unknown, options: { refresh: boolean; signal?: AbortSignal }): Promise<Record<string, unknown>>
}
