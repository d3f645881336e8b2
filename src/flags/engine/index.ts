// The pure feature-flag evaluation engine: PostHog `/decide` semantics, no I/O.
export type {
  ConditionGroup,
  EvalInput,
  FlagDefinition,
  FlagFilters,
  FlagOutcome,
  FlagResult,
  MatchReason,
  PropertyFilter,
  Variant,
} from './types'
export type { CompiledFlag } from './compile'
export { compileFlag } from './compile'
export { evaluateFlag, evaluateFlags } from './evaluate'
export { storedDataNeeded } from './stored-needs'
export { CohortSet, type CohortDefinition, inCohort, MAX_COHORT_DEPTH, UnsupportedCohortFilter } from './cohorts'
export { DependencyGraph, dependencyIdsOf, type EvaluationPlan } from './dependencies'
export { flagHash } from './hash'
export { HashMemo, type MemoTable } from './hash-memo'
export { parseRelativeDate } from './dates'
