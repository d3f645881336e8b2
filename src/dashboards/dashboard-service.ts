// Dashboards behind the routes: validate, write under the project's insight lock (its caps), and answer a dashboard
// with its tiles, recomputed on ?refresh two at a time within a time budget. Never sees the HTTP context.
import type { Sql } from 'postgres'
import { ApiError, databaseWork, errors, toErrorResponse } from '../http/errors'
import { NUMERIC_ID } from '../http/fields'
import type { Logger } from '../log'
import {
  countDashboards,
  dashboardTiles,
  getDashboard,
  insertDashboard,
  listDashboards,
  markDashboardRefreshed,
  storedResults,
  tileIds,
  updateDashboard,
  updateTile,
  type DashboardListOptions,
  type DashboardRow,
  type TileRow,
} from './dashboard-repository'
import { withInsightLock, type InsightRow } from './insight-repository'
import { countingRefusals, isStale, limitExceeded, type InsightMetrics, type InsightService, type ProjectContext } from './insight-service'
import { dashboardBasicJson, insightJson, tileJson, type TileError } from './serialize'
import { ProjectResultGate } from './result-gate'
import { DASHBOARD_LIMITS, validateDashboardBody, type RefreshMode } from './validation'

/** A tile computed now keeps only its size and time here: the answers are read back from the store within the dashboard's budget. */
type TileOutcome = { computed: { bytes: number; last_refresh: Date | string | null } } | { error: TileError }

const tileError = (code: string, detail: string): TileError => ({ type: 'server_error', code, detail, attr: null })

export class DashboardService {
  constructor(
    private readonly deps: {
      sql: Sql
      insights: InsightService
      /** a whole dashboard refresh starts no tile after this long (QUERY_TIMEOUT_MS) */
      refreshBudgetMs: number
      log?: Logger
      metrics?: InsightMetrics
    },
  ) {}

  /** dashboard refreshes running, by project */
  private readonly refreshing = new Map<number, number>()
  private readonly resultGate = new ProjectResultGate(DASHBOARD_LIMITS.projectResultBytesInFlight, DASHBOARD_LIMITS.projectResultWaitMs)

  list(teamId: number, options: DashboardListOptions) {
    return databaseWork(async () => {
      const { count, rows } = await listDashboards(this.deps.sql, teamId, options)
      return { count, results: rows.map(dashboardBasicJson) }
    })
  }

  private async existing(teamId: number, id: string): Promise<DashboardRow> {
    const row = NUMERIC_ID.test(id) ? await getDashboard(this.deps.sql, teamId, Number(id)) : null
    if (!row) throw errors.notFound()
    return row
  }

  /** The dashboard and its tiles: stored results, or recomputed (`force`; `blocking`: the stale ones). */
  retrieve(project: ProjectContext, id: string, mode: RefreshMode, signal?: AbortSignal) {
    return databaseWork(async () => {
      let dashboard = await this.existing(project.id, id)
      const entries = await dashboardTiles(this.deps.sql, dashboard.id)
      const outcomes = new Map<number, TileOutcome>()
      if (mode !== 'cache' && !dashboard.deleted) {
        const due = entries.filter((e) => e.insight.query !== null && (mode === 'force' || isStale(e.insight)))
        if (this.startRefresh(project.id)) {
          try {
            await this.refreshTiles(project, due, outcomes, signal)
          } finally {
            this.endRefresh(project.id)
          }
          await markDashboardRefreshed(this.deps.sql, dashboard.id)
          dashboard = (await getDashboard(this.deps.sql, project.id, dashboard.id))!
        } else {
          // the project's refreshes at their cap: the stored results now, rather than the same tiles computed again
          this.deps.metrics?.insightRefreshes.inc({ outcome: 'skipped_busy' }, due.length)
          const busy = tileError('dashboard_refresh_busy', `Not refreshed: ${DASHBOARD_LIMITS.refreshesPerProject} dashboard refreshes of this project are running; the last stored result is shown.`)
          for (const { tile } of due) outcomes.set(tile.id, { error: busy })
        }
      }
      return { ...dashboardBasicJson(dashboard), tiles: await this.renderTiles(project, entries, outcomes, signal) }
    })
  }

  /** A refresh of the project may start: fewer than DASHBOARD_LIMITS.refreshesPerProject run (counted until endRefresh). */
  private startRefresh(teamId: number): boolean {
    const running = this.refreshing.get(teamId) ?? 0
    if (running >= DASHBOARD_LIMITS.refreshesPerProject) return false
    this.refreshing.set(teamId, running + 1)
    return true
  }

  private endRefresh(teamId: number): void {
    const running = (this.refreshing.get(teamId) ?? 1) - 1
    if (running <= 0) this.refreshing.delete(teamId)
    else this.refreshing.set(teamId, running)
  }

  /** Compute the tiles' insights, DASHBOARD_LIMITS.refreshConcurrency at a time; none is started past the budget. */
  private async refreshTiles(project: ProjectContext, due: { tile: TileRow; insight: InsightRow }[], outcomes: Map<number, TileOutcome>, signal?: AbortSignal) {
    const deadline = performance.now() + this.deps.refreshBudgetMs
    let next = 0
    const worker = async () => {
      while (next < due.length && !signal?.aborted) {
        const { tile, insight } = due[next++]!
        if (performance.now() >= deadline) {
          this.deps.metrics?.insightRefreshes.inc({ outcome: 'skipped_budget' })
          outcomes.set(tile.id, { error: tileError('dashboard_refresh_budget', `Not refreshed: the dashboard's refresh ran out of its ${this.deps.refreshBudgetMs} ms; the last stored result is shown.`) })
          continue
        }
        try {
          const { bytes, last_refresh } = await this.deps.insights.compute(project, insight, signal)
          outcomes.set(tile.id, { computed: { bytes, last_refresh } })
        } catch (error) {
          const { status, body } = toErrorResponse('UNKNOWN', error)
          if (status >= 500 && !(error instanceof ApiError)) this.deps.log?.error({ err: error, insightId: insight.id }, 'dashboard tile refresh failed')
          outcomes.set(tile.id, { error: body })
        }
      }
    }
    await Promise.all(Array.from({ length: DASHBOARD_LIMITS.refreshConcurrency }, worker))
  }

  /**
   * Each tile with its insight and its answer as stored (a refresh has just stored what it computed, when at most
   * storedResultBytes). Results share one budget
   * (DASHBOARD_LIMITS.dashboardResultBytes) and each at most storedResultBytes: past either, the tile says so and
   * its insight is read on its own.
   */
  private async renderTiles(project: ProjectContext, entries: { tile: TileRow; insight: InsightRow }[], outcomes: Map<number, TileOutcome>, signal?: AbortSignal) {
    let room = DASHBOARD_LIMITS.dashboardResultBytes
    const plan = entries.map(({ tile, insight }) => {
      const outcome = outcomes.get(tile.id)
      const computed = outcome && 'computed' in outcome ? outcome.computed : null
      let error = outcome && 'error' in outcome ? outcome.error : null
      const bytes = computed ? computed.bytes : insight.result_bytes
      let show = computed !== null || insight.result_bytes > 0
      if (show && bytes > DASHBOARD_LIMITS.storedResultBytes) {
        show = false
        error ??= tileError('result_too_large', `This result is ${bytes} bytes, more than a dashboard tile carries (${DASHBOARD_LIMITS.storedResultBytes}): retrieve the insight itself.`)
      } else if (show && bytes > room) {
        show = false
        error ??= tileError('dashboard_too_large', `The dashboard's results passed ${DASHBOARD_LIMITS.dashboardResultBytes} bytes: retrieve this insight itself.`)
      }
      if (show) room -= bytes
      return { tile, insight, computed, error, show, bytes }
    })
    const shown = plan.filter((p) => p.show).map((p) => ({ id: p.insight.id, bytes: p.bytes }))
    // the project's viewers take turns past DASHBOARD_LIMITS.projectResultBytesInFlight (result-gate.ts)
    const release = await this.resultGate.acquire(project.id, shown.reduce((sum, p) => sum + p.bytes, 0), signal)
    const stored = await storedResults(this.deps.sql, shown, DASHBOARD_LIMITS.resultReadBatchBytes).finally(release)
    return plan.map(({ tile, insight, computed, error, show }) => {
      const answer = show ? (stored.get(insight.id) ?? null) : null
      const shown = computed ? { answer, is_cached: false, last_refresh: computed.last_refresh } : { answer, is_cached: true, last_refresh: insight.last_refresh }
      return tileJson(tile, insightJson(insight, shown, project.timezone), error)
    })
  }

  create(project: ProjectContext, userId: number, body: unknown) {
    return countingRefusals(this.deps.metrics, () =>
      databaseWork(async () => {
        const input = validateDashboardBody(body, 'POST')
        const id = await withInsightLock(this.deps.sql, project.id, async (tx) => {
          if (!input.deleted) await checkDashboardCap(tx, project.id)
          return insertDashboard(tx, project.id, userId, input)
        })
        return { ...dashboardBasicJson((await getDashboard(this.deps.sql, project.id, id))!), tiles: [] }
      }),
    )
  }

  update(project: ProjectContext, id: string, body: unknown) {
    return countingRefusals(this.deps.metrics, () =>
      databaseWork(async () => {
        const input = validateDashboardBody(body, 'PATCH')
        const before = await this.existing(project.id, id)
        await withInsightLock(this.deps.sql, project.id, async (tx) => {
          const existing = await getDashboard(tx, project.id, before.id)
          if (!existing) throw errors.notFound()
          if (input.deleted === false && existing.deleted) await checkDashboardCap(tx, project.id)
          await updateDashboard(tx, project.id, existing.id, input)
          if (input.tiles && input.tiles.length > 0) {
            const ids = await tileIds(tx, existing.id)
            const unknown = input.tiles.findIndex((t) => !ids.has(t.id))
            if (unknown >= 0) throw errors.validation('does_not_exist', `Tile ${input.tiles[unknown]!.id} is not on this dashboard.`, `tiles__${unknown}__id`)
            for (const tile of input.tiles) await updateTile(tx, existing.id, tile)
          }
        })
        return this.retrieve(project, String(before.id), 'cache')
      }),
    )
  }
}

async function checkDashboardCap(tx: Sql, teamId: number): Promise<void> {
  if ((await countDashboards(tx, teamId)) >= DASHBOARD_LIMITS.dashboardsPerProject) {
    throw limitExceeded(`A project may have at most ${DASHBOARD_LIMITS.dashboardsPerProject} dashboards: delete some first.`)
  }
}
