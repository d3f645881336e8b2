// What a request must load before its flags can be decided: the stored person (and its static cohorts) or groups,
// found from the flags' conditions and the overrides the request already gives.
import { CohortSet, cohortNeedsStored, cohortUsesMembership } from './cohorts'
import type { CompiledCondition, CompiledFlag } from './compile'
import { EMPTY, groupTypeName, requestGroupKey } from './evaluate'
import type { EvalInput } from './types'

function conditionNeedsStored(cond: CompiledCondition, overrides: Readonly<Record<string, unknown>>, cohorts: CohortSet, isPerson: boolean): boolean {
  if (cond.props === null || cond.propsError) return false
  for (const key of cond.keys) if (!Object.hasOwn(overrides, key)) return true
  if (cond.hasCohort && isPerson) {
    for (const p of cond.props) if (p.isCohort && cohortNeedsStored(p.cohortId, cohorts, overrides)) return true
  }
  return false
}

function usesMemberships(flag: CompiledFlag, cohorts: CohortSet): boolean {
  for (const cond of flag.conditions) {
    if (!cond.hasCohort || cond.props === null) continue
    for (const p of cond.props) if (p.isCohort && cohortUsesMembership(p.cohortId, cohorts)) return true
  }
  return false
}

/**
 * Which stored rows a request must load: a condition needs stored data when one of its property keys is missing
 * from the overrides, or when it uses a cohort that reads such a key or is static (then `memberships`: the person's
 * static cohorts are needed too). Inactive, deleted and broken flags, and group flags whose group is not in the
 * request, need nothing. A flag's dependencies are flags of their own: pass them too.
 */
export function storedDataNeeded(
  flags: readonly CompiledFlag[],
  input: Pick<EvalInput, 'personOverrides' | 'groupOverrides' | 'groups' | 'groupTypeNames' | 'cohorts'>,
): { person: boolean; groupTypes: Set<string>; memberships: boolean } {
  let person = false
  let memberships = false
  const cohorts = input.cohorts ?? CohortSet.EMPTY
  const groupTypes = new Set<string>()
  for (const flag of flags) {
    if (!flag.active || flag.deleted || flag.broken) continue
    let name: string | null = null
    let overrides: Readonly<Record<string, unknown>>
    if (flag.aggregationGroupTypeIndex === null) {
      if (person && (memberships || cohorts.size === 0)) continue
      overrides = input.personOverrides ?? EMPTY
    } else {
      const n = groupTypeName(flag, input.groupTypeNames)
      if (n === undefined || requestGroupKey(input.groups, n) === null || groupTypes.has(n)) continue
      name = n
      const go = input.groupOverrides
      overrides = go && Object.hasOwn(go, n) && go[n] ? go[n]! : EMPTY
    }
    const isPerson = name === null
    let needs = false
    const sup = flag.superCondition
    if (sup.kind === 'rollout') continue // decides the flag before any condition is looked at
    if (sup.kind === 'properties' && sup.isSetKey !== null) {
      needs = !Object.hasOwn(overrides, sup.isSetKey) || conditionNeedsStored(sup.cond, overrides, cohorts, isPerson)
    }
    if (!needs) {
      for (const cond of flag.conditions) {
        if (conditionNeedsStored(cond, overrides, cohorts, isPerson)) {
          needs = true
          break
        }
      }
    }
    if (!needs) continue
    if (isPerson) {
      person = true
      if (usesMemberships(flag, cohorts)) memberships = true
    } else groupTypes.add(name!)
  }
  return { person, groupTypes, memberships }
}
