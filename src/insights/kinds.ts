// The query kinds the query API serves, each registered with its runner.
import type { Sql } from 'postgres'
import type { QueryService } from '../query/service'
import { PersonSets } from './person-sets'
import { InsightsService, type InsightsOptions } from './service'
import { runTrends } from './trends'

/** `sql`: the Postgres of persons and cohorts, for person and cohort filters (none: such filters are refused). */
export function createInsightsService(query: QueryService, options: InsightsOptions, sql?: Sql): InsightsService {
  return new InsightsService(query, options, sql ? new PersonSets(sql) : undefined).register('TrendsQuery', runTrends)
}
