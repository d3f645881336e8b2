// Flags as the REST API renders them, and the form's own shape.
export interface FlagProperty {
  key: string
  type: 'person' | 'cohort' | 'flag' | string
  operator?: string
  value?: unknown
}

/** The person-property operators the editor offers, with their words. */
export const OPERATORS: [string, string][] = [
  ['exact', 'equals'],
  ['is_not', 'does not equal'],
  ['icontains', 'contains'],
  ['not_icontains', 'does not contain'],
  ['regex', 'matches regex'],
  ['not_regex', 'does not match regex'],
  ['gt', 'greater than'],
  ['lt', 'less than'],
  ['is_set', 'is set'],
  ['is_not_set', 'is not set'],
]

export interface Condition {
  properties: FlagProperty[]
  rollout_percentage: number | null
  variant?: string | null
}

export interface Variant {
  key: string
  name?: string
  rollout_percentage: number
}

export interface Flag {
  id: number
  key: string
  name: string
  active: boolean
  filters: { groups?: Condition[]; multivariate?: { variants: Variant[] } | null; payloads?: Record<string, unknown> }
  created_at: string | null
  updated_at?: string | null
  created_by: { email: string } | null
  last_modified_by?: { email: string } | null
  version?: number
}

export function rolloutSummary(flag: Flag): string {
  const groups = flag.filters.groups ?? []
  if (groups.length === 0) return 'No conditions'
  const parts = groups.map((g) => {
    const pct = g.rollout_percentage ?? 100
    const filters = g.properties?.length ? ` of users matching ${g.properties.length} filter${g.properties.length === 1 ? '' : 's'}` : ' of all users'
    return `${pct}%${filters}`
  })
  const variants = flag.filters.multivariate?.variants?.length
  return parts.join('; ') + (variants ? ` · ${variants} variants` : '')
}
