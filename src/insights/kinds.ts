// The query kinds the query API serves, each registered with its runner.
import type { Sql } from 'postgres'
import { ExperimentQueryNode } from '../experiments/model'
import type { ExperimentsService } from '../experiments/service'
import type { QueryService } from '../query/service'
import { PersonSets } from './person-sets'
import { InsightsService, type InsightsOptions } from './service'
import { runTrends } from './trends'

/**
 * `sql`: the Postgres of persons and cohorts, for person and cohort filters (none: such filters are refused);
 * `experiments`: for ExperimentQuery (none: not served).
 */
export function createInsightsService(query: QueryService, options: InsightsOptions, sql?: Sql, experiments?: ExperimentsService): InsightsService {
  const service = new InsightsService(query, options, sql ? new PersonSets(sql) : undefined).register('TrendsQuery', runTrends)
  if (experiments) {
    service.register(
      'ExperimentQuery',
      async (node: { experiment_id: number; metric?: unknown }, ctx) => ({ body: await experiments.results(ctx.project.id, node.experiment_id, node.metric ?? null, ctx.signal), range: null }),
      { schema: ExperimentQueryNode, cached: false },
    )
  }
  return service
}
