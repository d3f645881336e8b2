// Evaluation of compiled flags: PostHog's FeatureFlagMatcher.get_match (FM), as a pure function.
import { CohortSet, cohortNeedsStored, inCohort, type PersonSource } from './cohorts'
import { type CompiledCondition, type CompiledFlag, isWellFormed, type Rollout } from './compile'
import { dependencyMatches, DependencyGraph } from './dependencies'
import { memoHash } from './memo-hash'
import { type CompiledProperty, matchAbsent, matchPresent } from './operators'
import { pyStr } from './python/pyvalue'
import type { EvalInput, FlagOutcome, FlagResult, MatchReason } from './types'

/** Thrown when a condition needs stored properties not given: a bare object, cheap to throw (no stack). */
const NEEDS_STORED_DATA = Object.freeze({ needsStoredData: true })
class EvaluationError extends Error {}

export const EMPTY: Readonly<Record<string, unknown>> = Object.freeze({})

const REASON_SCORE: Record<MatchReason, number> = {
  super_condition_value: 4,
  holdout_condition_value: 3.5,
  condition_match: 3,
  no_group_type: 2,
  out_of_rollout_bound: 1,
  no_condition_match: 0,
}

type Entity =
  | { kind: 'none' }
  | {
      kind: 'person' | 'group'
      /** group type name (groups only) */
      name: string
      identifier: string
      overrides: Readonly<Record<string, unknown>>
      stored: Readonly<Record<string, unknown>> | null | undefined
    }

export function groupTypeName(flag: CompiledFlag, names: ReadonlyMap<number, string>): string | undefined {
  let idx = flag.aggregationGroupTypeIndex
  if (typeof idx === 'boolean') idx = idx ? 1 : 0 // Python: True == 1 as a dict key
  return typeof idx === 'number' ? names.get(idx) : undefined
}

export function requestGroupKey(groups: Record<string, string>, name: string): string | null {
  if (!groups || !Object.hasOwn(groups, name)) return null
  const v: unknown = groups[name]
  if (v === null || v === undefined) return null
  return typeof v === 'string' ? v : pyStr(v)
}

function resolveEntity(flag: CompiledFlag, input: EvalInput): Entity {
  if (flag.aggregationGroupTypeIndex === null) {
    const overrides = input.hashKeyOverrides
    if (flag.ensureExperienceContinuity && overrides && Object.hasOwn(overrides, flag.key)) {
      return { kind: 'person', name: '', identifier: overrides[flag.key]!, overrides: input.personOverrides ?? EMPTY, stored: input.storedPerson }
    }
    return personEntity(input)
  }
  const name = groupTypeName(flag, input.groupTypeNames)
  if (name === undefined) return { kind: 'none' }
  const key = requestGroupKey(input.groups, name)
  if (key === null) return { kind: 'none' }
  const go = input.groupOverrides
  const overrides = go && Object.hasOwn(go, name) && go[name] ? go[name]! : EMPTY
  const stored = input.storedGroups === undefined ? undefined : input.storedGroups.has(name) ? input.storedGroups.get(name) : undefined
  return { kind: 'group', name, identifier: key, overrides, stored }
}

// The person of the last input asked for: every person flag of a request shares it (evaluation is synchronous,
// and the service fills in the stored person between passes, which the check on `stored` sees).
let personOf: EvalInput | null = null
let personMemo: Entity = { kind: 'none' }

function personEntity(input: EvalInput): Entity {
  const overrides = input.personOverrides ?? EMPTY
  const m = personMemo
  if (personOf !== input || m.kind !== 'person' || m.stored !== input.storedPerson || m.overrides !== overrides || m.identifier !== input.distinctId) {
    personMemo = { kind: 'person', name: '', identifier: input.distinctId, overrides, stored: input.storedPerson }
    personOf = input
  }
  return personMemo
}

const NO_MEMBERSHIPS: ReadonlySet<number> = new Set()

/** Cohort answers of one request, for one state of its stored data (evaluation is synchronous, per request). */
const cohortMemos = new WeakMap<EvalInput, { stored: unknown; memberships: unknown; memo: Map<number, boolean> }>()

function cohortMemo(input: EvalInput): Map<number, boolean> {
  const found = cohortMemos.get(input)
  if (found && found.stored === input.storedPerson && found.memberships === input.staticCohorts) return found.memo
  const memo = new Map<number, boolean>()
  cohortMemos.set(input, { stored: input.storedPerson, memberships: input.staticCohorts, memo })
  return memo
}

/** A `type: "flag"` filter: the dependency's outcome in this request (a missing dependency is false). */
function dependencyMatch(p: CompiledProperty, input: EvalInput): boolean {
  const outcome = p.dependencyId === null ? undefined : input.flagOutcomes?.get(p.dependencyId)
  if (outcome === undefined) return false
  if (!outcome.ok) {
    if (outcome.error === 'needs_stored_data') throw NEEDS_STORED_DATA
    throw new EvaluationError('a dependency could not be evaluated')
  }
  return dependencyMatches(p.value, outcome.result)
}

/** A person (or group) property inside a condition that uses cohorts or dependencies: overrides, then stored. */
function propertyOnMerged(p: CompiledProperty, overrides: Readonly<Record<string, unknown>>, stored: Readonly<Record<string, unknown>> | null, now: Date): boolean {
  if (Object.hasOwn(overrides, p.key)) return matchPresent(p, overrides[p.key], now)
  if (stored !== null && Object.hasOwn(stored, p.key)) {
    const v = stored[p.key]
    return v === null || v === undefined ? matchAbsent(p, true) : matchPresent(p, v, now)
  }
  return matchAbsent(p, false)
}

/**
 * A condition that uses cohorts or other flags, evaluated as PostHog's Rust service does: properties on the stored
 * row merged with the overrides (a person with no row: the overrides alone), then dependencies, then cohorts.
 * A cohort filter on an unknown or deleted cohort is false, whatever its operator.
 */
function extendedMatch(cond: CompiledCondition, entity: Exclude<Entity, { kind: 'none' }>, input: EvalInput): boolean {
  const props = cond.props!
  const overrides = entity.overrides
  const cohorts = input.cohorts ?? CohortSet.EMPTY
  const isPerson = entity.kind === 'person'
  let needsStored = false
  for (const key of cond.keys) {
    if (!Object.hasOwn(overrides, key)) {
      needsStored = true
      break
    }
  }
  if (!needsStored && isPerson) {
    for (const p of props) {
      if (p.isCohort && cohortNeedsStored(p.cohortId, cohorts, overrides)) {
        needsStored = true
        break
      }
    }
  }
  if (needsStored && entity.stored === undefined) throw NEEDS_STORED_DATA
  const stored = entity.stored ?? null
  for (const p of props) if (!p.isCohort && !p.isFlag && !propertyOnMerged(p, overrides, stored, input.now)) return false
  for (const p of props) if (p.isFlag && !dependencyMatch(p, input)) return false
  if (!cond.hasCohort) return true
  const source: PersonSource = { overrides, stored, memberships: input.staticCohorts ?? NO_MEMBERSHIPS, now: input.now }
  const memo = cohortMemo(input)
  for (const p of props) {
    if (!p.isCohort) continue
    if (!isPerson || p.cohortId === null || p.cohortOperator === 'other' || cohorts.get(p.cohortId) === undefined) return false
    if (inCohort(p.cohortId, cohorts, source, new Set(), memo) !== (p.cohortOperator === 'in')) return false
  }
  return true
}

/** The properties of one condition: true when they all match. */
function propertiesMatch(
  cond: CompiledCondition,
  entity: Exclude<Entity, { kind: 'none' }>,
  input: EvalInput,
  allowPureIsNot: boolean,
): boolean {
  if (cond.hasCohort || cond.hasFlag) return extendedMatch(cond, entity, input)
  const now = input.now
  const props = cond.props!
  const overrides = entity.overrides
  // can_compute_locally: every key in the overrides
  let local = true
  if (local) {
    for (const key of cond.keys) {
      if (!Object.hasOwn(overrides, key)) {
        local = false
        break
      }
    }
  }
  if (local) {
    for (const p of props) if (!matchPresent(p, overrides[p.key], now)) return false
    return true
  }
  const stored = entity.stored
  if (stored === undefined) throw NEEDS_STORED_DATA
  if (stored === null) return allowPureIsNot && cond.pureIsNot
  // The server builds one query from every property (overrides short-circuit per property), so all
  // of them are looked at even after one fails.
  let all = true
  for (const p of props) {
    let ok: boolean
    if (Object.hasOwn(overrides, p.key)) ok = matchPresent(p, overrides[p.key], now)
    else if (Object.hasOwn(stored, p.key)) {
      const v = stored[p.key]
      ok = v === null || v === undefined ? matchAbsent(p, true) : matchPresent(p, v, now)
    } else ok = matchAbsent(p, false)
    if (!ok) all = false
  }
  return all
}

// The rollout hash of the last (flag, identifier) asked for: the conditions of one flag share it, and it is a
// pure function of the two, so keeping it across calls is always right (evaluation is synchronous).
let hashedFlag: CompiledFlag | null = null
let hashedIdentifier = ''
let hashedValue = 0
// The identifier checked last: the flags of one request share it.
let checkedIdentifier = ''

function assertEncodable(flag: CompiledFlag, identifier: string): void {
  if (!flag.keyWellFormed) throw new EvaluationError('flag key is not valid UTF-16')
  if (identifier === checkedIdentifier) return
  if (!isWellFormed(identifier)) throw new EvaluationError('identifier is not valid UTF-16')
  checkedIdentifier = identifier
}

function rolloutHash(flag: CompiledFlag, identifier: string, input: EvalInput): number {
  if (hashedFlag !== flag || hashedIdentifier !== identifier) {
    assertEncodable(flag, identifier)
    hashedValue = memoHash(input, 'rollout', flag, identifier)
    hashedFlag = flag
    hashedIdentifier = identifier
  }
  return hashedValue
}

/** `hash > rollout / 100`. The hash is at most 1, so a rollout of 100 or more passes without hashing. */
function rolloutFails(rollout: Rollout, flag: CompiledFlag, identifier: string, input: EvalInput): boolean {
  if (rollout === null) return false
  if (rollout === 'error') throw new EvaluationError('rollout_percentage is not a number')
  if (rollout >= 100) {
    assertEncodable(flag, identifier) // Python still hashes, and raises on what UTF-8 cannot encode
    return false
  }
  return rolloutHash(flag, identifier, input) > rollout / 100
}

type ConditionReason = 'condition_match' | 'no_condition_match' | 'out_of_rollout_bound'

/** FM is_condition_match. */
function conditionMatch(
  cond: CompiledCondition,
  entity: Exclude<Entity, { kind: 'none' }>,
  input: EvalInput,
  flag: CompiledFlag,
): ConditionReason {
  if (cond.propsError) throw new EvaluationError('malformed condition properties')
  if (cond.props !== null) {
    if (!propertiesMatch(cond, entity, input, true)) return 'no_condition_match'
    if (cond.rollout === null) return 'condition_match'
  }
  return rolloutFails(cond.rollout, flag, entity.identifier, input) ? 'out_of_rollout_bound' : 'condition_match'
}

function payloadFor(flag: CompiledFlag, variant: string | null): unknown {
  const payloads = flag.payloads
  if (payloads === 'error') throw new EvaluationError('payloads is not an object')
  const k = variant ? variant : 'true'
  return Object.hasOwn(payloads, k) ? payloads[k] : undefined
}

function lookupVariant(flag: CompiledFlag, identifier: string, input: EvalInput): string | null {
  const table = flag.variantTable
  if (table === 'error') throw new EvaluationError('malformed variants')
  if (table.length === 0) return null
  assertEncodable(flag, identifier)
  const h = memoHash(input, 'variant', flag, identifier)
  for (const slot of table) if (h >= slot.min && h < slot.max) return slot.key
  return null
}

type Matched = FlagOutcome & { ok: true }

const REASON_INDEX: Record<MatchReason, number> = {
  condition_match: 0,
  no_condition_match: 1,
  out_of_rollout_bound: 2,
  no_group_type: 3,
  super_condition_value: 4,
  holdout_condition_value: 5,
}

/**
 * The outcome of a flag, shared by every request that reaches it (frozen: nobody may change it). Its payload
 * follows from the rest: `payloads[variant or "true"]` when enabled, none otherwise.
 */
function result(flag: CompiledFlag, enabled: boolean, variant: string | null, reason: MatchReason, conditionIndex: number | null): Matched {
  const slot = ((conditionIndex === null ? 0 : conditionIndex + 1) * 8 + REASON_INDEX[reason]) * 2 + (enabled ? 1 : 0)
  if (variant === null) return flag.plainOutcomes[slot] ?? (flag.plainOutcomes[slot] = made(flag, enabled, null, reason, conditionIndex))
  let byVariant = flag.outcomes.get(slot)
  if (byVariant === undefined) flag.outcomes.set(slot, (byVariant = new Map()))
  const known = byVariant.get(variant)
  if (known !== undefined) return known
  const outcome = made(flag, enabled, variant, reason, conditionIndex)
  byVariant.set(variant, outcome)
  return outcome
}

function made(flag: CompiledFlag, enabled: boolean, variant: string | null, reason: MatchReason, conditionIndex: number | null): Matched {
  const payload = enabled ? payloadFor(flag, variant) : undefined
  const value: FlagResult = Object.freeze({ key: flag.key, enabled, variant, reason, conditionIndex, payload })
  return Object.freeze({ ok: true as const, result: value })
}

function getMatch(flag: CompiledFlag, input: EvalInput): Matched {
  if (flag.broken) throw new EvaluationError('broken flag')
  const entity = resolveEntity(flag, input)
  if (entity.kind === 'none') return result(flag, false, null, 'no_group_type', null)
  const identifier = entity.identifier
  const now = input.now

  // Super conditions (early access): only the first super group counts.
  const sup = flag.superCondition
  if (sup.kind === 'error') throw new EvaluationError('malformed super_groups')
  if (sup.kind === 'properties') {
    if (sup.isSetKey !== null) {
      const key = sup.isSetKey
      let isSet: boolean
      if (Object.hasOwn(entity.overrides, key)) isSet = true
      else if (entity.stored === undefined) throw NEEDS_STORED_DATA
      else isSet = entity.stored !== null && Object.hasOwn(entity.stored, key)
      if (isSet) {
        if (sup.cond.propsError) throw new EvaluationError('malformed super condition')
        const value = propertiesMatch(sup.cond, entity, input, false)
        return result(flag, value, null, 'super_condition_value', 0)
      }
    }
  } else if (sup.kind === 'rollout') {
    const r = conditionMatch(sup.cond, entity, input, flag)
    const matched = r === 'condition_match'
    return result(flag, matched, null, matched ? 'super_condition_value' : r, 0)
  }

  // Holdout: the first holdout group, rollout only, hashed on `holdout-<identifier>`.
  const holdout = flag.holdout
  if (holdout.kind === 'error') throw new EvaluationError('malformed holdout_groups')
  if (holdout.kind === 'rollout') {
    const rollout = holdout.rollout
    if (rollout === 'error') throw new EvaluationError('rollout_percentage is not a number')
    let out = false
    if (rollout !== null) {
      if (!isWellFormed(identifier)) throw new EvaluationError('identifier is not valid UTF-16')
      out = memoHash(input, 'holdout', null, identifier) > rollout / 100
    }
    if (!out) {
      const v = holdout.variant
      const variant = v ? (typeof v === 'string' ? v : pyStr(v)) : lookupVariant(flag, identifier, input)
      return result(flag, true, variant, 'holdout_condition_value', 0)
    }
  }

  let bestReason: MatchReason = 'no_condition_match'
  let bestIndex = 0
  for (const cond of flag.conditions) {
    const reason = conditionMatch(cond, entity, input, flag)
    if (reason === 'condition_match') {
      const keys = flag.variantKeys
      if (keys === 'error') throw new EvaluationError('malformed variants')
      const override = cond.variant
      let variant: string | null
      if (override !== null && override !== undefined && keys.includes(override)) {
        variant = typeof override === 'string' ? override : pyStr(override)
      } else variant = lookupVariant(flag, identifier, input)
      return result(flag, true, variant, 'condition_match', cond.index)
    }
    if (REASON_SCORE[bestReason] <= REASON_SCORE[reason]) {
      bestReason = reason
      bestIndex = cond.index
    }
  }
  return result(flag, false, null, bestReason, bestIndex)
}

/** Evaluate one flag (active or not: the caller decides which flags to ask about). Never throws. */
export function evaluateFlag(flag: CompiledFlag, input: EvalInput): FlagOutcome {
  try {
    return getMatch(flag, input)
  } catch (e) {
    // EvaluationError, PythonException (what the server raises), or anything unexpected
    return { ok: false, key: flag.key, error: e === NEEDS_STORED_DATA ? 'needs_stored_data' : 'evaluation_error' }
  }
}

/**
 * Evaluate every active, non-deleted flag, dependencies first; inactive and deleted flags get no outcome. Outcomes
 * come back in the order of `flags`; a flag on a dependency cycle (or depending on one) is an evaluation error.
 */
export function evaluateFlags(flags: readonly CompiledFlag[], input: EvalInput): FlagOutcome[] {
  const active = flags.filter((f) => f.active && !f.deleted)
  const plan = new DependencyGraph(active).plan(active)
  const outcomes = new Map<number, FlagOutcome>()
  const run: EvalInput = { ...input, flagOutcomes: outcomes }
  const byIndex: FlagOutcome[] = new Array(active.length)
  for (const i of plan.cyclic) byIndex[i] = { ok: false, key: plan.flags[i].key, error: 'evaluation_error' }
  for (const i of plan.order) {
    const outcome = evaluateFlag(plan.flags[i], run)
    outcomes.set(plan.flags[i].id, outcome)
    byIndex[i] = outcome
  }
  return byIndex
}
