// Cohorts as the REST API renders them (PostHog's CohortSerializer).
import { isoDate } from '../http/format'
import type { CohortRow } from './repository'

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function hasBehavioural(node: unknown, depth = 0): boolean {
  if (depth > 64) return false
  if (Array.isArray(node)) return node.some((v) => hasBehavioural(v, depth + 1))
  if (!isObject(node)) return false
  return node.type === 'behavioral' || Object.values(node).some((v) => v !== null && typeof v === 'object' && hasBehavioural(v, depth + 1))
}

/** PostHog's cohort_type: static, person_property (what flags can use) or behavioral. */
export function cohortType(row: Pick<CohortRow, 'is_static' | 'filters'>): 'static' | 'person_property' | 'behavioral' {
  if (row.is_static) return 'static'
  return hasBehavioural(row.filters) ? 'behavioral' : 'person_property'
}

export function cohortJson(row: CohortRow) {
  const filters = isObject(row.filters) && Object.keys(row.filters).length > 0 ? row.filters : { properties: {} }
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    groups: row.groups ?? [],
    deleted: row.deleted,
    filters,
    query: null,
    is_calculating: row.is_calculating,
    created_by: row.created_by,
    created_at: isoDate(row.created_at),
    last_calculation: row.is_static ? isoDate(row.updated_at) : null,
    errors_calculating: 0,
    count: row.count,
    is_static: row.is_static,
    cohort_type: cohortType(row),
    experiment_set: [],
    version: row.version,
  }
}
