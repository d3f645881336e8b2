// The query API's work, run on the analytics thread (src/analytics/): the route checks the key and the body, this
// computes the answer there.
import type { Operations } from '../http/offload'
import type { InsightProject, InsightsService } from './service'

export const queryOperations = {
  'query.run': (s: { insights: InsightsService }, [project, node, refresh]: [InsightProject, unknown, unknown], signal: AbortSignal) =>
    s.insights.run(project, node, { refresh, signal }),
} satisfies Operations<never>
