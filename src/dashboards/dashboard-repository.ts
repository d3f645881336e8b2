// Dashboards in Postgres, and their tiles with the insights on them. Writes that count against the project's caps
// run under the insight lock (insight-repository.ts withInsightLock).
import type { Sql } from 'postgres'
import { asJson } from '../db/postgres'
import { userObject } from '../flags/repository'
import { escapeLike } from '../definitions/rules'
import type { UserBasic } from '../projects/users'
import { selectInsights, type InsightRow } from './insight-repository'
import type { DashboardInput, TileInput } from './validation'

export interface DashboardRow {
  id: number
  team_id: number
  name: string | null
  description: string
  pinned: boolean
  deleted: boolean
  tags: string[]
  last_refresh: Date | string | null
  created_at: Date | string
  created_by: UserBasic | null
}

export interface TileRow {
  id: number
  color: string | null
  layouts: Record<string, unknown>
  insight_id: number
}

function selectDashboards(sql: Sql) {
  return sql`
    select d.id, d.team_id, d.name, d.description, d.pinned, d.deleted, d.tags, d.last_refresh, d.created_at,
           (select ${userObject(sql)} from users u where u.id = d.created_by_id) as created_by
      from dashboards d`
}

export interface DashboardListOptions {
  limit: number
  offset: number
  search?: string
  pinned?: boolean
}

/** A page of the project's dashboards (not deleted): pinned first, then newest. Rows are small (bounded fields). */
export async function listDashboards(sql: Sql, teamId: number, o: DashboardListOptions): Promise<{ count: number; rows: DashboardRow[] }> {
  const search = o.search ? `%${escapeLike(o.search)}%` : null
  const where = sql`
    d.team_id = ${teamId} and not d.deleted
    and (${search}::text is null or d.name ilike ${search} or d.description ilike ${search})
    and (${o.pinned ?? null}::boolean is null or d.pinned = ${o.pinned ?? null})`
  const [[{ count }], rows] = await Promise.all([
    sql<{ count: number }[]>`select count(*)::int as count from dashboards d where ${where}`,
    sql<DashboardRow[]>`${selectDashboards(sql)} where ${where} order by d.pinned desc, d.created_at desc, d.id desc limit ${o.limit} offset ${o.offset}`,
  ])
  return { count, rows }
}

export async function getDashboard(sql: Sql, teamId: number, id: number): Promise<DashboardRow | null> {
  const [row] = await sql<DashboardRow[]>`${selectDashboards(sql)} where d.team_id = ${teamId} and d.id = ${id}`
  return row ?? null
}

export async function countDashboards(tx: Sql, teamId: number): Promise<number> {
  const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from dashboards where team_id = ${teamId} and not deleted`
  return n
}

export async function insertDashboard(tx: Sql, teamId: number, userId: number, input: DashboardInput): Promise<number> {
  const [row] = await tx<{ id: number }[]>`
    insert into dashboards (team_id, name, description, pinned, deleted, tags, created_by_id)
    values (${teamId}, ${input.name ?? null}, ${input.description ?? ''}, ${input.pinned ?? false}, ${input.deleted ?? false},
            ${tx.array(input.tags ?? [])}::text[], ${userId})
    returning id`
  return row.id
}

export async function updateDashboard(tx: Sql, teamId: number, id: number, input: DashboardInput): Promise<void> {
  await tx`
    update dashboards set
      name = case when ${input.name !== undefined}::boolean then ${input.name ?? null}::text else name end,
      description = coalesce(${input.description ?? null}::text, description),
      pinned = coalesce(${input.pinned ?? null}::boolean, pinned),
      deleted = coalesce(${input.deleted ?? null}::boolean, deleted),
      tags = coalesce(${input.tags === undefined ? null : tx.array(input.tags)}::text[], tags)
    where team_id = ${teamId} and id = ${id}`
}

/** Tile ids of the dashboard (not deleted), for checking a PATCH of `tiles`. */
export async function tileIds(tx: Sql, dashboardId: number): Promise<Set<number>> {
  const rows = await tx<{ id: number }[]>`select id from dashboard_tiles where dashboard_id = ${dashboardId} and not deleted`
  return new Set(rows.map((r) => r.id))
}

export async function updateTile(tx: Sql, dashboardId: number, tile: TileInput): Promise<void> {
  await tx`
    update dashboard_tiles set
      deleted = coalesce(${tile.deleted ?? null}::boolean, deleted),
      color = case when ${tile.color !== undefined}::boolean then ${tile.color ?? null}::text else color end,
      layouts = coalesce(${tile.layouts === undefined ? null : tx.json(asJson(tile.layouts))}::jsonb, layouts)
    where dashboard_id = ${dashboardId} and id = ${tile.id}`
}

/** The dashboard's tiles (not deleted) whose insight is not deleted, oldest first, with their insights (without their stored results: storedResults reads those within the answer's budget). */
export async function dashboardTiles(sql: Sql, dashboardId: number): Promise<{ tile: TileRow; insight: InsightRow }[]> {
  const tiles = await sql<TileRow[]>`
    select t.id, t.color, t.layouts, t.insight_id from dashboard_tiles t join insights i on i.id = t.insight_id
     where t.dashboard_id = ${dashboardId} and not t.deleted and not i.deleted
     order by t.id`
  if (tiles.length === 0) return []
  const insights = await sql<InsightRow[]>`${selectInsights(sql, false)} where i.id = any(${sql.array(tiles.map((t) => t.insight_id))}::int[])`
  const byId = new Map(insights.map((i) => [i.id, i]))
  return tiles.flatMap((tile) => (byId.has(tile.insight_id) ? [{ tile, insight: byId.get(tile.insight_id)! }] : []))
}

export async function markDashboardRefreshed(sql: Sql, dashboardId: number): Promise<void> {
  await sql`update dashboards set last_refresh = now() where id = ${dashboardId}`
}

/**
 * The stored answers of these insights (with their sizes), read in statements of at most `batchBytes` each: on the
 * embedded store one thread answers every statement, and others pass between these.
 */
export async function storedResults(sql: Sql, insights: { id: number; bytes: number }[], batchBytes: number): Promise<Map<number, Record<string, unknown> | null>> {
  const out = new Map<number, Record<string, unknown> | null>()
  let batch: number[] = []
  let size = 0
  const read = async () => {
    if (batch.length === 0) return
    const rows = await sql<{ id: number; result: Record<string, unknown> | null }[]>`select id, result from insights where id = any(${sql.array(batch)}::int[])`
    for (const r of rows) out.set(r.id, r.result)
    batch = []
    size = 0
  }
  for (const { id, bytes } of insights) {
    if (batch.length > 0 && size + bytes > batchBytes) await read()
    batch.push(id)
    size += bytes
  }
  await read()
  return out
}
