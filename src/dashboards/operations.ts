// Saved insights and dashboards, run on the analytics thread (src/analytics/): a dashboard's tiles are computed,
// read from Postgres and encoded there, never on the thread that serves capture and /decide. The routes check the
// key and the input and hand over plain arguments.
import type { Operations } from '../http/offload'
import { page } from '../http/pagination'
import type { Metrics } from '../ops/metrics'
import type { DashboardListOptions } from './dashboard-repository'
import type { DashboardService } from './dashboard-service'
import type { InsightListOptions } from './insight-repository'
import type { InsightService, ProjectContext } from './insight-service'
import type { RefreshMode } from './validation'

interface DashboardServices {
  savedInsights: InsightService
  dashboards: DashboardService
  metrics?: Pick<Metrics, 'listPagesCut'>
}

type PageArgs<O> = [project: ProjectContext, options: O, url: string]

export const dashboardOperations = {
  'insights.list': async (s: DashboardServices, [project, options, url]: PageArgs<InsightListOptions>) => {
    const { count, cut, results } = await s.savedInsights.list(project, options)
    if (cut) s.metrics?.listPagesCut.inc({ list: 'insights' })
    return page(new URL(url), count, options.limit, options.offset, results, cut)
  },
  'insights.create': (s: DashboardServices, [project, userId, body]: [ProjectContext, number, unknown]) => s.savedInsights.create(project, userId, body),
  'insights.retrieve': (s: DashboardServices, [project, id, mode]: [ProjectContext, string, RefreshMode], signal: AbortSignal) => s.savedInsights.retrieve(project, id, mode, signal),
  'insights.update': (s: DashboardServices, [project, id, userId, body]: [ProjectContext, string, number, unknown]) => s.savedInsights.update(project, id, userId, body),
  'dashboards.list': async (s: DashboardServices, [project, options, url]: PageArgs<DashboardListOptions>) => {
    const { count, results } = await s.dashboards.list(project.id, options)
    return page(new URL(url), count, options.limit, options.offset, results)
  },
  'dashboards.create': (s: DashboardServices, [project, userId, body]: [ProjectContext, number, unknown]) => s.dashboards.create(project, userId, body),
  'dashboards.retrieve': (s: DashboardServices, [project, id, mode]: [ProjectContext, string, RefreshMode], signal: AbortSignal) => s.dashboards.retrieve(project, id, mode, signal),
  'dashboards.update': (s: DashboardServices, [project, id, body]: [ProjectContext, string, unknown]) => s.dashboards.update(project, id, body),
} satisfies Operations<never>
