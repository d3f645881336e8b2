// The query kinds the query API serves, each registered with its runner.
import type { QueryService } from '../query/service'
import { funnelsRunner, type FunnelLimits } from './funnels'
import { InsightsService, type InsightsOptions } from './service'
import { runTrends } from './trends'

/** What kinds need beyond the service's own options (their budgets and counters). */
export interface KindOptions {
  funnels: FunnelLimits
}

export function createInsightsService(query: QueryService, options: InsightsOptions, kinds: KindOptions): InsightsService {
  return new InsightsService(query, options)
    .register('TrendsQuery', runTrends)
    .register('FunnelsQuery', funnelsRunner(kinds.funnels))
}
