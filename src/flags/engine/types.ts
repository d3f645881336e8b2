// Public types of the pure feature-flag evaluation engine.
import type { CohortSet } from './cohorts'
import type { HashMemo } from './hash-memo'

// The semantics follow PostHog's Python `/decide` server; docs/compatibility.md says where this service differs.

export interface PropertyFilter {
  key: string
  value?: unknown
  operator?: string | null
  type?: string
  group_type_index?: number | null
  negation?: boolean
}

export interface ConditionGroup {
  properties?: PropertyFilter[] | null
  rollout_percentage?: number | null
  variant?: string | null
}

export interface Variant {
  key: string
  name?: string | null
  rollout_percentage: number
}

export interface FlagFilters {
  groups?: ConditionGroup[]
  multivariate?: { variants: Variant[] } | null
  payloads?: Record<string, unknown> | null
  aggregation_group_type_index?: number | null
  super_groups?: ConditionGroup[] | null
  holdout_groups?: ConditionGroup[] | null
  properties?: PropertyFilter[] | null
  [k: string]: unknown
}

export interface FlagDefinition {
  id: number
  key: string
  active: boolean
  deleted: boolean
  filters: FlagFilters
  rollout_percentage?: number | null /* legacy column */
  ensure_experience_continuity: boolean
  version: number
}

export type MatchReason =
  | 'condition_match'
  | 'no_condition_match'
  | 'out_of_rollout_bound'
  | 'no_group_type'
  | 'super_condition_value'
  | 'holdout_condition_value'

export interface FlagResult {
  key: string
  enabled: boolean
  variant: string | null
  reason: MatchReason
  conditionIndex: number | null
  payload: unknown /* undefined when none */
}

export type FlagOutcome =
  | { ok: true; result: FlagResult }
  | { ok: false; key: string; error: 'needs_stored_data' | 'evaluation_error' }

export interface EvalInput {
  distinctId: string
  groups: Record<string, string> // group type name -> group key, from the request
  groupTypeNames: ReadonlyMap<number, string> // group type index -> name (the project's mapping)
  personOverrides: Record<string, unknown> // request person_properties, already including distinct_id
  groupOverrides: Record<string, Record<string, unknown>> // per group type name, already including $group_key
  storedPerson: Record<string, unknown> | null | undefined // undefined = not loaded/unavailable, null = no person row
  storedGroups: ReadonlyMap<string, Record<string, unknown> | null> | undefined // by group type name; same undefined/null meaning
  hashKeyOverrides?: Record<string, string> // flag key -> identifier to hash (experience continuity)
  now: Date
  /** the project's cohorts that flags use (absent: every cohort is unknown, so cohort filters are false) */
  cohorts?: CohortSet
  /** ids of the static cohorts the person belongs to, loaded with storedPerson (absent: none) */
  staticCohorts?: ReadonlySet<number>
  /** outcomes of this request's flags so far, by flag id: what `type: "flag"` filters compare against */
  flagOutcomes?: ReadonlyMap<number, FlagOutcome>
  /** rollout and variant hashes remembered across requests (absent: every hash is computed) */
  hashMemo?: HashMemo
}
