// The query kinds the query API serves, each registered with its runner.
import type { Sql } from 'postgres'
import { ExperimentQueryNode } from '../experiments/model'
import type { ExperimentsService } from '../experiments/service'
import type { QueryService } from '../query/service'
import { runEventsQuery } from './events-query'
import { funnelsRunner, type FunnelLimits } from './funnels'
import { lifecycleRunner, personCreation } from './lifecycle'
import { PersonSets } from './person-sets'
import { retentionRunner } from './retention'
import { InsightsService, type InsightsOptions } from './service'
import { runStickiness } from './stickiness'
import { runTrends } from './trends'
import { runWebOverview, runWebStatsTable } from './web'
import { WebOverviewQuery, WebStatsTableQuery } from './web-model'

/** What kinds need beyond the service's own options: their budgets, counters and the stores they read. */
export interface KindOptions {
  funnels: FunnelLimits
  /** the Postgres of persons and cohorts, for person and cohort filters and breakdowns (none: refused) */
  sql?: Sql
  /** for ExperimentQuery (none: not served) */
  experiments?: ExperimentsService
  /** counts each scan of a project's persons for person and cohort filters */
  onPersonScan?: () => void
  /** counts each query refused (400), by its code */
  onRefused?: (code: string) => void
}

export function createInsightsService(query: QueryService, options: InsightsOptions, kinds: KindOptions): InsightsService {
  const service = new InsightsService(query, { ...options, onRefused: kinds.onRefused }, kinds.sql ? new PersonSets(kinds.sql, kinds.onPersonScan) : undefined)
    .register('TrendsQuery', runTrends)
    .register('FunnelsQuery', funnelsRunner(kinds.funnels))
    .register('RetentionQuery', retentionRunner())
    .register('EventsQuery', runEventsQuery)
    .register('WebOverviewQuery', runWebOverview, { schema: WebOverviewQuery })
    .register('WebStatsTableQuery', runWebStatsTable, { schema: WebStatsTableQuery })
    // lifecycles read when persons were created (Postgres); their pages share QUERY_TIMEOUT_MS as a funnel's do
    .register('LifecycleQuery', lifecycleRunner({ persons: kinds.sql ? personCreation(kinds.sql) : undefined, timeoutMs: kinds.funnels.timeoutMs }))
    .register('StickinessQuery', runStickiness)
  const { experiments } = kinds
  if (experiments) {
    service.register(
      'ExperimentQuery',
      async (node: { experiment_id: number; metric?: unknown }, ctx) => ({ body: await experiments.results(ctx.project.id, node.experiment_id, node.metric ?? null, ctx.signal), range: null }),
      { schema: ExperimentQueryNode, cached: false },
    )
  }
  return service
}
