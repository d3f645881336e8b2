// The query kinds the query API serves, each registered with its runner.
import type { QueryService } from '../query/service'
import { runEventsQuery } from './events-query'
import { retentionRunner } from './retention'
import { InsightsService, type InsightsOptions } from './service'
import { runTrends } from './trends'

export function createInsightsService(query: QueryService, options: InsightsOptions): InsightsService {
  return new InsightsService(query, options).register('TrendsQuery', runTrends).register('RetentionQuery', retentionRunner()).register('EventsQuery', runEventsQuery)
}
