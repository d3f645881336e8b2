// An analytics thread's composition root: its own connections to Postgres (or the embedded one's socket) and to the
// event store, and the services that read them for the private API — the query API and its insight kinds, saved
// insights and dashboards, experiment results, the events API and value suggestions.
import { ActionService } from '../actions/service'
import type { Config } from '../config'
import { DashboardService } from '../dashboards/dashboard-service'
import { InsightService } from '../dashboards/insight-service'
import { openDatabase } from '../db/postgres'
import { PropertyValueService } from '../events/property-values'
import { createEventStore } from '../events/factory'
import { ResilientStore } from '../events/resilient-store'
import type { EventStore } from '../events/store'
import { experimentBudgets, ExperimentsService } from '../experiments/service'
import { ErrorTrackingService } from '../error-tracking/service'
import { SurveyStatsService } from '../surveys/stats'
import { createInsightsService } from '../insights/kinds'
import type { InsightsService } from '../insights/service'
import type { Logger } from '../log'
import type { Metrics } from '../ops/metrics'
import { createQueryRunner } from '../query/factory'
import { QueryService } from '../query/service'
import { createRecordingStore } from '../replay/factory'
import { RecordingService } from '../replay/service'

export interface AnalyticsServices {
  metrics: Metrics
  events: EventStore
  personIds: (teamId: number, distinctIds: string[]) => Promise<Map<string, string>>
  values: PropertyValueService
  query: QueryService
  insights: InsightsService
  experiments: ExperimentsService
  /** error tracking's issues with their counts (src/error-tracking/) */
  errorTracking: ErrorTrackingService
  surveyStats: SurveyStatsService
  savedInsights: InsightService
  dashboards: DashboardService
  /** session recordings: the list, one recording, its snapshots (src/replay/) */
  recordings: RecordingService
  close(): Promise<void>
}

export async function startAnalyticsServices(config: Config, log: Logger, metrics: Metrics): Promise<AnalyticsServices> {
  const closers: (() => Promise<void>)[] = []
  const close = async () => {
    for (const c of closers.reverse()) await c().catch((error) => log.warn({ err: error }, 'error while closing'))
  }
  try {
    // half the process's pool: the serving thread keeps its own for keys, flags and writes
    const db = await openDatabase({
      databaseUrl: config.DATABASE_URL,
      dataDir: config.DATA_DIR,
      poolMax: Math.max(2, Math.floor(config.PG_POOL_MAX / 2)),
      joinRunningServer: true,
      statementTimeoutMs: config.PG_STATEMENT_TIMEOUT_MS,
    })
    closers.push(() => db.close())
    // reads on this thread itself: it is already off the serving thread
    const events = new ResilientStore(createEventStore(config))
    await events.init()
    closers.push(() => events.close())
    const runner = createQueryRunner(config, metrics)
    closers.push(() => runner.close())
    // compiled here too (no compile thread of its own): this thread is the one that waits for it anyway
    const query = new QueryService(runner, { timeoutMs: config.QUERY_TIMEOUT_MS, maxResultBytes: config.QUERY_MAX_RESULT_BYTES, metrics })
    // ActionsNode series, steps, entities and experiment metrics read their actions' steps from Postgres here
    const actions = new ActionService({ sql: db.sql })
    const experiments = new ExperimentsService({
      sql: db.sql,
      query,
      ...experimentBudgets(config, metrics),
      actionCondition: (teamId, id, attr) => actions.eventCondition(teamId, id, attr),
    })
    const insights = createInsightsService(query, { cacheTtlMs: config.INSIGHTS_CACHE_TTL_MS, cacheMaxBytes: config.INSIGHTS_CACHE_MAX_BYTES, actions }, {
      funnels: { maxEvents: config.INSIGHTS_FUNNEL_MAX_EVENTS, timeoutMs: config.QUERY_TIMEOUT_MS, onEvents: (outcome, count) => metrics.insightFunnelEvents.inc({ outcome }, count) },
      sql: db.sql,
      experiments,
      onPersonScan: () => metrics.insightPersonScans.inc(),
      onRefused: (code) => metrics.insightQueriesRefused.inc({ code }),
    })
    // a saved insight is computed as the query API computes its source node, always anew (its own store keeps it)
    const savedInsights = new InsightService({ sql: db.sql, runner: { run: (project, node, { signal }) => insights.run(project, node, { refresh: 'force_blocking', signal }) }, metrics })
    const dashboards = new DashboardService({ sql: db.sql, insights: savedInsights, refreshBudgetMs: config.QUERY_TIMEOUT_MS, log, metrics })
    const recordingStore = createRecordingStore(config)
    await recordingStore.init()
    closers.push(() => recordingStore.close())
    const recordings = new RecordingService({
      store: recordingStore,
      sql: db.sql,
      defaultRetentionDays: config.RECORDING_RETENTION_DAYS,
      maxSnapshotBytes: Math.min(64 * 1024 * 1024, config.ANALYTICS_MAX_ANSWER_BYTES),
    })
    return {
      metrics,
      events,
      personIds: (teamId, distinctIds) => query.personIds(teamId, distinctIds),
      values: new PropertyValueService(query, metrics),
      query,
      insights,
      experiments,
      errorTracking: new ErrorTrackingService({ sql: db.sql, query }),
      surveyStats: new SurveyStatsService({ sql: db.sql, query }),
      savedInsights,
      dashboards,
      recordings,
      close,
    }
  } catch (error) {
    await close()
    throw error
  }
}
