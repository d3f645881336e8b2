// Flags as the REST API and local_evaluation render them (PostHog's FeatureFlagSerializer and
// MinimalFeatureFlagSerializer), with FeatureFlag.get_filters()'s legacy conversion applied.
import type { UserBasic } from '../projects/users'
import { sortedTags } from '../definitions/rules'
import { isoDate } from '../http/format'
import type { FlagFilters } from './engine'

export interface FlagRow {
  id: number
  team_id: number
  key: string
  name: string
  filters: Record<string, unknown>
  rollout_percentage: number | null
  active: boolean
  deleted: boolean
  ensure_experience_continuity: boolean
  version: number
  created_at: Date | string
  updated_at: Date | string
  created_by: UserBasic | null
  last_modified_by: UserBasic | null
  /** absent in rows read before the tags column existed (tests that build rows) */
  tags?: string[]
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** FeatureFlag.get_filters(): filters without `groups` become one condition from the legacy columns. */
export function getFilters(filters: unknown, legacyRollout: number | null): FlagFilters {
  if (isObject(filters) && Object.hasOwn(filters, 'groups')) return filters as FlagFilters
  const properties = isObject(filters) && Object.hasOwn(filters, 'properties') ? filters.properties : []
  return { groups: [{ properties: properties as never, rollout_percentage: legacyRollout }] }
}

function conditionsOf(filters: FlagFilters): Record<string, unknown>[] {
  return Array.isArray(filters.groups) ? (filters.groups as unknown as Record<string, unknown>[]) : []
}

/** One condition, no properties, no group aggregation: server SDKs can gate it without asking. */
export function isSimpleFlag(filters: FlagFilters): boolean {
  const conditions = conditionsOf(filters)
  return (
    conditions.length === 1 &&
    conditions.every((c) => !Array.isArray(c?.properties) || c.properties.length === 0) &&
    (filters.aggregation_group_type_index ?? null) === null
  )
}

export function flagJson(row: FlagRow) {
  const filters = getFilters(row.filters, row.rollout_percentage)
  const simple = isSimpleFlag(filters)
  return {
    id: row.id,
    name: row.name,
    key: row.key,
    filters,
    deleted: row.deleted,
    active: row.active,
    created_by: row.created_by,
    created_at: isoDate(row.created_at),
    updated_at: isoDate(row.updated_at),
    version: row.version,
    last_modified_by: row.last_modified_by,
    is_simple_flag: simple,
    rollout_percentage: simple ? ((conditionsOf(filters)[0]?.rollout_percentage as number | null | undefined) ?? null) : null,
    ensure_experience_continuity: row.ensure_experience_continuity,
    experiment_set: [],
    surveys: [],
    features: [],
    can_edit: true,
    tags: sortedTags(row.tags ?? []),
    is_remote_configuration: false,
    has_encrypted_payloads: false,
    evaluation_runtime: 'all',
  }
}

export interface MinimalFlagSource {
  id: number
  team_id: number
  name: string
  key: string
  filters: unknown
  rollout_percentage: number | null
  deleted: boolean
  active: boolean
  ensure_experience_continuity: boolean
  version: number
}

/** What local_evaluation sends for each flag (MinimalFeatureFlagSerializer). */
export function minimalFlagJson(f: MinimalFlagSource) {
  return {
    id: f.id,
    team_id: f.team_id,
    name: f.name,
    key: f.key,
    filters: getFilters(f.filters, f.rollout_percentage),
    deleted: f.deleted,
    active: f.active,
    ensure_experience_continuity: f.ensure_experience_continuity,
    has_encrypted_payloads: false,
    version: f.version,
    evaluation_runtime: 'all',
    evaluation_tags: [],
  }
}
