// Which dynamic cohorts the form can edit (pure: unit-tested in filters.test.ts).

export interface Filter {
  key: string
  operator: string
  value: string
}

export interface CohortFilters {
  filters: { properties?: { type?: string; values?: unknown[] } }
}

/**
 * The cohort's filters as this form shows them: one AND group of person-property filters (what the form makes).
 * null for anything richer (OR groups, nested cohorts, behaviour, negation): those are kept as they are and shown
 * as JSON, since rewriting them through this form would change who is in the cohort.
 */
export function editableFilters(cohort: CohortFilters): Filter[] | null {
  const root = cohort.filters?.properties as { type?: string; values?: unknown[] } | undefined
  if (!root || !Array.isArray(root.values) || root.values.length === 0) return []
  if (root.values.length !== 1) return null
  const group = root.values[0] as { type?: string; values?: unknown[] }
  if (!group || (group.type !== 'AND' && root.type !== 'AND') || !Array.isArray(group.values)) return null
  const out: Filter[] = []
  for (const item of group.values) {
    const f = item as { key?: unknown; type?: unknown; operator?: unknown; value?: unknown; negation?: unknown }
    if (typeof f.key !== 'string' || f.type !== 'person' || f.negation === true) return null
    if (f.value !== undefined && f.value !== null && typeof f.value !== 'string' && typeof f.value !== 'number') return null
    out.push({ key: f.key, operator: typeof f.operator === 'string' ? f.operator : 'exact', value: f.value === undefined || f.value === null ? '' : String(f.value) })
  }
  return out
}
