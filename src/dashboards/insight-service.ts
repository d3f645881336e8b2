// Saved insights behind the routes: validate, write under the project's insight lock (its caps), compute a result
// through the injected runner and keep it when small enough. Never sees the HTTP context.
import type { Sql } from 'postgres'
import { ApiError, databaseWork, errors } from '../http/errors'
import { NUMERIC_ID } from '../http/fields'
import type { Metrics } from '../ops/metrics'
import {
  countInsights,
  existingDashboards,
  getInsight,
  insertInsight,
  listInsights,
  liveTileCounts,
  setInsightDashboards,
  storeResult,
  updateInsight,
  withInsightLock,
  type InsightListOptions,
  type InsightRow,
} from './insight-repository'
import type { InsightQueryRunner } from './runner'
import { insightJson, storedInsightJson, type InsightAnswer } from './serialize'
import { DASHBOARD_LIMITS, querySource, validateInsightBody, type InsightInput, type RefreshMode } from './validation'

/** The project a request is about, as far as insights need it. */
export interface ProjectContext {
  id: number
  timezone: string
  /** 0 Sunday, 1 Monday: where insights' weeks start */
  weekStartDay: number
}

/** Only what insights need of a project row: it crosses to the analytics thread. */
export function projectContext(project: ProjectContext): ProjectContext {
  return { id: project.id, timezone: project.timezone, weekStartDay: project.weekStartDay }
}

export type InsightMetrics = Pick<Metrics, 'insightWritesRefused' | 'insightRefreshes'>

/** `refresh=blocking` computes again when the stored result is older than this. */
export const STALE_AFTER_MS = 15 * 60_000

/** No stored result, or one older than STALE_AFTER_MS. */
export function isStale(row: Pick<InsightRow, 'last_refresh'>, now = Date.now()): boolean {
  return row.last_refresh === null || now - new Date(row.last_refresh).getTime() > STALE_AFTER_MS
}

export function limitExceeded(detail: string, attr: string | null = null): ApiError {
  return errors.validation('limit_exceeded', detail, attr)
}

/** Count a refused write by the field at fault (the first part of a nested attr), then pass the error on. */
export async function countingRefusals<T>(metrics: InsightMetrics | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof ApiError && error.status === 400) metrics?.insightWritesRefused.inc({ field: error.attr?.split('__')[0] ?? 'project_cap' })
    throw error
  }
}

export interface ComputedAnswer extends InsightAnswer {
  answer: Record<string, unknown>
  /** the answer's size as JSON */
  bytes: number
}

export class InsightService {
  constructor(
    private readonly deps: {
      sql: Sql
      runner: InsightQueryRunner
      metrics?: InsightMetrics
    },
  ) {}

  list(project: ProjectContext, options: InsightListOptions) {
    return databaseWork(async () => {
      const { count, rows, cut } = await listInsights(this.deps.sql, project.id, options)
      return { count, cut, results: rows.map((row) => storedInsightJson(row, project.timezone)) }
    })
  }

  private async existing(teamId: number, id: string, withResult = true): Promise<InsightRow> {
    const row = NUMERIC_ID.test(id) ? await getInsight(this.deps.sql, teamId, Number(id), withResult) : null
    if (!row) throw errors.notFound()
    return row
  }

  /** The insight with its stored result, or one computed now (`force`; `blocking` when the stored one is stale). */
  retrieve(project: ProjectContext, id: string, mode: RefreshMode, signal?: AbortSignal) {
    return databaseWork(async () => {
      const row = await this.existing(project.id, id)
      const compute = mode === 'force' || (mode === 'blocking' && row.query !== null && isStale(row))
      if (!compute) return storedInsightJson(row, project.timezone)
      return insightJson(row, await this.compute(project, row, signal), project.timezone)
    })
  }

  /**
   * Run the insight's query now and keep the answer if it is at most DASHBOARD_LIMITS.storedResultBytes (a larger
   * one is answered, not kept, and the stored one dropped: it would be older than what the user saw).
   */
  async compute(project: ProjectContext, row: Pick<InsightRow, 'id' | 'query'>, signal?: AbortSignal): Promise<ComputedAnswer> {
    if (row.query === null) throw errors.validation('required', 'This insight has no query to compute.', 'query')
    let answer: Record<string, unknown>
    try {
      answer = await this.deps.runner.run(project, querySource(row.query), { refresh: true, signal })
    } catch (error) {
      this.deps.metrics?.insightRefreshes.inc({ outcome: 'failed' })
      throw error
    }
    const text = JSON.stringify(answer)
    const bytes = Buffer.byteLength(text)
    const keep = bytes <= DASHBOARD_LIMITS.storedResultBytes
    const stored = await storeResult(this.deps.sql, project.id, row.id, row.query, keep ? text : null, keep ? bytes : 0)
    this.deps.metrics?.insightRefreshes.inc({ outcome: keep ? 'stored' : 'too_large_to_store' })
    return { answer, bytes, is_cached: false, last_refresh: stored ?? new Date() }
  }

  create(project: ProjectContext, userId: number, body: unknown) {
    return countingRefusals(this.deps.metrics, () =>
      databaseWork(async () => {
        const input = validateInsightBody(body)
        const id = await withInsightLock(this.deps.sql, project.id, async (tx) => {
          if (!input.deleted) await checkInsightCap(tx, project.id)
          const id = await insertInsight(tx, project.id, userId, input)
          if (input.dashboards && !input.deleted) await placeOnDashboards(tx, project.id, id, [], input.dashboards)
          return id
        })
        return storedInsightJson((await getInsight(this.deps.sql, project.id, id))!, project.timezone)
      }),
    )
  }

  update(project: ProjectContext, id: string, userId: number, body: unknown) {
    return countingRefusals(this.deps.metrics, () =>
      databaseWork(async () => {
        const input: InsightInput = validateInsightBody(body)
        const before = await this.existing(project.id, id, false)
        await withInsightLock(this.deps.sql, project.id, async (tx) => {
          // read again under the lock: the caps compare against what the write replaces
          const existing = await getInsight(tx, project.id, before.id, false)
          if (!existing) throw errors.notFound()
          if (input.deleted === false && existing.deleted) await checkInsightCap(tx, project.id)
          await updateInsight(tx, project.id, existing.id, userId, input)
          const deleted = input.deleted ?? existing.deleted
          if (input.dashboards !== undefined && !deleted) {
            await placeOnDashboards(tx, project.id, existing.id, existing.dashboard_tiles.map((t) => t.dashboard_id), input.dashboards)
          }
        })
        return storedInsightJson((await getInsight(this.deps.sql, project.id, before.id))!, project.timezone)
      }),
    )
  }
}

async function checkInsightCap(tx: Sql, teamId: number): Promise<void> {
  if ((await countInsights(tx, teamId)) >= DASHBOARD_LIMITS.insightsPerProject) {
    throw limitExceeded(`A project may have at most ${DASHBOARD_LIMITS.insightsPerProject} insights: delete some first.`)
  }
}

/** PostHog's way of putting an insight on dashboards: its `dashboards` is the whole list it should be on. */
async function placeOnDashboards(tx: Sql, teamId: number, insightId: number, current: number[], wanted: number[]): Promise<void> {
  const found = new Set(await existingDashboards(tx, teamId, wanted))
  const missing = wanted.find((d) => !found.has(d))
  if (missing !== undefined) throw errors.validation('does_not_exist', `Dashboard ${missing} does not exist.`, 'dashboards')
  const added = wanted.filter((d) => !current.includes(d))
  const counts = await liveTileCounts(tx, added)
  const full = added.find((d) => (counts.get(d) ?? 0) >= DASHBOARD_LIMITS.tilesPerDashboard)
  if (full !== undefined) {
    throw limitExceeded(`Dashboard ${full} already has ${DASHBOARD_LIMITS.tilesPerDashboard} tiles, the most a dashboard may hold.`, 'dashboards')
  }
  await setInsightDashboards(tx, insightId, wanted)
}
