// Insights and dashboards as the REST API renders them (PostHog's InsightSerializer, DashboardSerializer and
// DashboardBasicSerializer).
import { isoDate } from '../http/format'
import { sortedTags } from '../definitions/rules'
import type { DashboardRow, TileRow } from './dashboard-repository'
import type { InsightRow } from './insight-repository'

/** An answer of the query API, as an insight carries it: `result` (its rows or series) beside its columns. */
export interface InsightAnswer {
  /** the query API's JSON, or null when there is none to show */
  answer: Record<string, unknown> | null
  is_cached: boolean
  last_refresh: Date | string | null
}

export function insightJson(row: InsightRow, answer: InsightAnswer, timezone: string) {
  const a = answer.answer
  return {
    id: row.id,
    short_id: row.short_id,
    name: row.name,
    derived_name: row.derived_name,
    description: row.description,
    query: row.query,
    filters: {},
    order: null,
    deleted: row.deleted,
    favorited: row.favorited,
    saved: row.saved,
    tags: sortedTags(row.tags),
    dashboards: row.dashboard_tiles.map((t) => t.dashboard_id),
    dashboard_tiles: row.dashboard_tiles,
    created_at: isoDate(row.created_at),
    created_by: row.created_by,
    updated_at: isoDate(row.last_modified_at),
    last_modified_at: isoDate(row.last_modified_at),
    last_modified_by: row.last_modified_by,
    last_refresh: isoDate(answer.last_refresh),
    result: a ? (a.results ?? a.result ?? null) : null,
    hasMore: a && typeof a.hasMore === 'boolean' ? a.hasMore : null,
    columns: a && Array.isArray(a.columns) ? a.columns : null,
    types: a && Array.isArray(a.types) ? a.types : null,
    hogql: a && typeof a.hogql === 'string' ? a.hogql : null,
    is_cached: answer.is_cached,
    timezone,
    query_status: null,
    cache_target_age: null,
    next_allowed_client_refresh: null,
    is_sample: false,
  }
}

/** The insight with the answer stored for it. */
export function storedInsightJson(row: InsightRow, timezone: string) {
  return insightJson(row, { answer: row.result, is_cached: row.result !== null, last_refresh: row.last_refresh }, timezone)
}

export function dashboardBasicJson(row: DashboardRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    pinned: row.pinned,
    created_at: isoDate(row.created_at),
    created_by: row.created_by,
    last_refresh: isoDate(row.last_refresh),
    is_shared: false,
    deleted: row.deleted,
    creation_mode: 'default',
    tags: sortedTags(row.tags),
    filters: {},
  }
}

export interface TileError {
  type: string
  code: string
  detail: string
  attr: string | null
}

export function tileJson(tile: TileRow, insight: ReturnType<typeof insightJson>, error: TileError | null) {
  return {
    id: tile.id,
    insight,
    text: null,
    color: tile.color,
    layouts: tile.layouts,
    deleted: false,
    is_cached: insight.is_cached,
    last_refresh: insight.last_refresh,
    error,
  }
}
