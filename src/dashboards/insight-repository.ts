// Saved insights in Postgres, and the tiles that put them on dashboards. Writes that count against a project's
// caps run under the project's insight lock (withInsightLock), so that concurrent writes cannot pass a cap together.
import type { Sql } from 'postgres'
import { asJson, inTransaction } from '../db/postgres'
import { userObject } from '../flags/repository'
import { rowsThatFit } from '../http/pagination'
import { escapeLike } from '../definitions/rules'
import type { UserBasic } from '../projects/users'
import type { InsightInput } from './validation'

/** Advisory lock of a project's insights, dashboards and tiles ("phin"). */
const INSIGHT_WRITE_LOCK = 0x70_68_69_6e

export async function withInsightLock<T>(sql: Sql, teamId: number, work: (tx: Sql) => Promise<T>): Promise<T> {
  return (await sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    await tx`select pg_advisory_xact_lock(${INSIGHT_WRITE_LOCK}::int, ${teamId}::int)`
    return work(tx)
  })) as T
}

export interface TileRef {
  id: number
  dashboard_id: number
  deleted: boolean
}

export interface InsightRow {
  id: number
  team_id: number
  short_id: string
  name: string | null
  derived_name: string | null
  description: string
  query: Record<string, unknown> | null
  favorited: boolean
  saved: boolean
  deleted: boolean
  tags: string[]
  /** the stored answer (null when none, or when the row was read without it) */
  result: Record<string, unknown> | null
  result_bytes: number
  last_refresh: Date | string | null
  created_at: Date | string
  created_by: UserBasic | null
  last_modified_at: Date | string
  last_modified_by: UserBasic | null
  /** its tiles on dashboards that are not deleted */
  dashboard_tiles: TileRef[]
}

export function selectInsights(sql: Sql, withResult: boolean) {
  return sql`
    select i.id, i.team_id, i.short_id, i.name, i.derived_name, i.description, i.query, i.favorited, i.saved, i.deleted,
           i.tags, ${withResult ? sql`i.result` : sql`null::jsonb`} as result, i.result_bytes, i.last_refresh,
           i.created_at, i.last_modified_at,
           (select ${userObject(sql)} from users u where u.id = i.created_by_id) as created_by,
           (select ${userObject(sql)} from users u where u.id = i.last_modified_by_id) as last_modified_by,
           coalesce((select json_agg(json_build_object('id', t.id, 'dashboard_id', t.dashboard_id, 'deleted', t.deleted) order by t.id)
                       from dashboard_tiles t join dashboards d on d.id = t.dashboard_id
                      where t.insight_id = i.id and not t.deleted and not d.deleted), '[]'::json) as dashboard_tiles
      from insights i`
}

export interface InsightListOptions {
  limit: number
  offset: number
  search?: string
  saved?: boolean
  favorited?: boolean
  shortId?: string
  /** insights on every one of these dashboards */
  dashboards?: number[]
  /** leave the stored results out (PostHog's basic=true) */
  basic: boolean
  maxBytes: number
}

/** A page of the project's insights (not deleted), last modified first, within the page's byte budget. */
export async function listInsights(sql: Sql, teamId: number, o: InsightListOptions): Promise<{ count: number; rows: InsightRow[]; cut: boolean }> {
  const search = o.search ? `%${escapeLike(o.search)}%` : null
  const dashboards = o.dashboards ?? null
  const where = sql`
    i.team_id = ${teamId} and not i.deleted
    and (${search}::text is null or i.name ilike ${search} or i.derived_name ilike ${search} or i.description ilike ${search})
    and (${o.saved ?? null}::boolean is null or i.saved = ${o.saved ?? null})
    and (${o.favorited ?? null}::boolean is null or i.favorited = ${o.favorited ?? null})
    and (${o.shortId ?? null}::text is null or i.short_id = ${o.shortId ?? null})
    and (${dashboards === null}::boolean or (
      select count(distinct t.dashboard_id) from dashboard_tiles t
       where t.insight_id = i.id and not t.deleted and t.dashboard_id = any(${sql.array(dashboards ?? [])}::int[])
    ) = ${dashboards?.length ?? 0})`
  const order = sql`order by i.last_modified_at desc, i.id desc`
  // sizes first (cheap), then only the rows that fit
  const [[{ count }], sizes] = await Promise.all([
    sql<{ count: number }[]>`select count(*)::int as count from insights i where ${where}`,
    sql<{ bytes: number }[]>`
      select 1000 + coalesce(octet_length(i.query::text), 0) + octet_length(i.description) + coalesce(octet_length(i.name), 0)
             + coalesce(octet_length(i.derived_name), 0) + coalesce(octet_length(array_to_string(i.tags, '')), 0) + 4 * cardinality(i.tags)
             + 60 * (select count(*) from dashboard_tiles t where t.insight_id = i.id and not t.deleted)::int
             + ${o.basic ? 0 : sql`i.result_bytes`} as bytes
        from insights i where ${where} ${order} limit ${o.limit} offset ${o.offset}`,
  ])
  const fit = rowsThatFit(sizes.map((r) => r.bytes), o.limit, o.maxBytes)
  const rows = fit === 0 ? [] : await sql<InsightRow[]>`${selectInsights(sql, !o.basic)} where ${where} ${order} limit ${fit} offset ${o.offset}`
  return { count, rows, cut: fit < sizes.length }
}

/** An insight of the project, deleted or not. */
export async function getInsight(sql: Sql, teamId: number, id: number, withResult = true): Promise<InsightRow | null> {
  const [row] = await sql<InsightRow[]>`${selectInsights(sql, withResult)} where i.team_id = ${teamId} and i.id = ${id}`
  return row ?? null
}

export async function countInsights(tx: Sql, teamId: number): Promise<number> {
  const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from insights where team_id = ${teamId} and not deleted`
  return n
}

const SHORT_ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

/** PostHog's short id: 8 random characters of [A-Za-z0-9]. */
export function randomShortId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8))
  // 62 does not divide 256: the slight bias does not matter for an id that only has to be unique per project
  return Array.from(bytes, (b) => SHORT_ID_ALPHABET[b % SHORT_ID_ALPHABET.length]).join('')
}

/** Insert an insight with a fresh short id (drawn again on the rare collision); `tx` holds the insight lock. */
export async function insertInsight(tx: Sql, teamId: number, userId: number, input: InsightInput): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    if (attempt === 5) throw new Error('five random short ids in a row were taken')
    const [row] = await tx<{ id: number }[]>`
      insert into insights (team_id, short_id, name, derived_name, description, query, favorited, saved, deleted, tags,
                            created_by_id, last_modified_by_id)
      values (${teamId}, ${randomShortId()}, ${input.name ?? null}, ${input.derived_name ?? null}, ${input.description ?? ''},
              ${input.query ? tx.json(asJson(input.query)) : null}, ${input.favorited ?? false}, ${input.saved ?? false},
              ${input.deleted ?? false}, ${tx.array(input.tags ?? [])}::text[], ${userId}, ${userId})
      on conflict (team_id, short_id) do nothing
      returning id`
    if (row) return row.id
  }
}

/** Write the fields given. A new query drops the stored answer (it answered another question). */
export async function updateInsight(tx: Sql, teamId: number, id: number, userId: number, input: InsightInput): Promise<void> {
  const queryChanged = input.query !== undefined
  await tx`
    update insights set
      name = case when ${input.name !== undefined}::boolean then ${input.name ?? null}::text else name end,
      derived_name = case when ${input.derived_name !== undefined}::boolean then ${input.derived_name ?? null}::text else derived_name end,
      description = coalesce(${input.description ?? null}::text, description),
      query = case when ${queryChanged}::boolean then ${input.query ? tx.json(asJson(input.query)) : null}::jsonb else query end,
      result = case when ${queryChanged}::boolean then null else result end,
      result_bytes = case when ${queryChanged}::boolean then 0 else result_bytes end,
      last_refresh = case when ${queryChanged}::boolean then null else last_refresh end,
      favorited = coalesce(${input.favorited ?? null}::boolean, favorited),
      saved = coalesce(${input.saved ?? null}::boolean, saved),
      deleted = coalesce(${input.deleted ?? null}::boolean, deleted),
      tags = coalesce(${input.tags === undefined ? null : tx.array(input.tags)}::text[], tags),
      last_modified_by_id = ${userId},
      last_modified_at = now()
    where team_id = ${teamId} and id = ${id}`
  // a deleted insight leaves its dashboards
  if (input.deleted === true) await tx`update dashboard_tiles set deleted = true where insight_id = ${id} and not deleted`
}

/**
 * Keep the answer computed for `query` (its JSON text; null: too large to keep, the old one dropped), unless the
 * insight's query changed while it ran.
 */
export async function storeResult(sql: Sql, teamId: number, id: number, query: Record<string, unknown>, resultJson: string | null, bytes: number): Promise<Date | null> {
  const [row] = await sql<{ last_refresh: Date | null }[]>`
    update insights set result = ${resultJson}::text::jsonb, result_bytes = ${bytes},
           last_refresh = case when ${resultJson === null}::boolean then null else now() end
     where team_id = ${teamId} and id = ${id} and query = ${sql.json(asJson(query))}::jsonb
    returning last_refresh`
  return row?.last_refresh ?? null
}

/** Of these dashboard ids, those the project has (not deleted). */
export async function existingDashboards(tx: Sql, teamId: number, ids: number[]): Promise<number[]> {
  const rows = await tx<{ id: number }[]>`select id from dashboards where team_id = ${teamId} and not deleted and id = any(${tx.array(ids)}::int[])`
  return rows.map((r) => r.id)
}

/** Tiles (not deleted) of each of these dashboards whose insight is not deleted. */
export async function liveTileCounts(tx: Sql, dashboardIds: number[]): Promise<Map<number, number>> {
  const rows = await tx<{ dashboard_id: number; n: number }[]>`
    select t.dashboard_id, count(*)::int as n from dashboard_tiles t join insights i on i.id = t.insight_id
     where t.dashboard_id = any(${tx.array(dashboardIds)}::int[]) and not t.deleted and not i.deleted
     group by t.dashboard_id`
  return new Map(rows.map((r) => [r.dashboard_id, r.n]))
}

/** Put the insight on exactly these dashboards: new tiles made, removed ones marked deleted, old ones revived. */
export async function setInsightDashboards(tx: Sql, insightId: number, dashboardIds: number[]): Promise<void> {
  await tx`
    update dashboard_tiles set deleted = true
     where insight_id = ${insightId} and not deleted and not (dashboard_id = any(${tx.array(dashboardIds)}::int[]))`
  if (dashboardIds.length === 0) return
  await tx`
    insert into dashboard_tiles (dashboard_id, insight_id)
    select d, ${insightId} from unnest(${tx.array(dashboardIds)}::int[]) as d
    on conflict (dashboard_id, insight_id) do update set deleted = false`
}
