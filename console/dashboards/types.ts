// The dashboards API's shapes, as far as the console reads them.

export interface InsightSummary {
  id: number
  name: string | null
  derived_name?: string | null
  query: unknown
  result?: unknown
  dashboards?: number[]
  last_refresh?: string | null
}

export interface Tile {
  id: number
  insight: InsightSummary | null
  deleted?: boolean
  error?: { detail?: string } | null
}

export interface Dashboard {
  id: number
  name: string
  description?: string
  pinned?: boolean
  created_at?: string
  last_refresh?: string | null
  tiles?: Tile[]
}

export function insightName(insight: InsightSummary | null): string {
  return insight?.name || insight?.derived_name || `Insight ${insight?.id ?? ''}`.trim()
}
