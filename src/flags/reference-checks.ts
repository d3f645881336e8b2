// The parts of flag validation that look at other stored things, with PostHog's messages: a cohort filter must name
// a cohort of the project (a deleted one is accepted) with no behavioural filter anywhere in it; a flag filter must
// name an active flag of the project by id, not the flag itself, and close no cycle. Pure: the references are read
// beforehand (references.ts) and handed in.
import { errors } from '../http/errors'
import { pyStr } from './engine/python/pyvalue'
import type { CohortRef, FlagRef } from './references'

export interface FilterReferences {
  /** cohorts named by the filters, and those they nest */
  cohorts: ReadonlyMap<number, CohortRef>
  /** the project's flags that are not deleted */
  flags: readonly FlagRef[]
  /** the key of the flag being written: POST the key sent, PATCH the stored key */
  selfKey: string | null
}

export const NO_REFERENCES: FilterReferences = { cohorts: new Map(), flags: [], selfKey: null }

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function invalid(detail: string, code = 'invalid_input'): never {
  throw errors.validation(code, detail, 'filters')
}

/** Python's int() of an id as flags store it (a JSON integer, or its text with optional sign and spaces). */
export function safeInt(v: unknown): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? Math.trunc(v) : null
  if (typeof v === 'string' && /^\s*[+-]?\d{1,15}\s*$/.test(v)) return Number(v.trim())
  return null
}

/** The condition filters of `filters.groups` (what PostHog's dependency and cohort checks read). */
function* conditionProperties(filters: unknown): Generator<Record<string, unknown>> {
  if (!isObject(filters) || !Array.isArray(filters.groups)) return
  for (const group of filters.groups) {
    if (!isObject(group) || !Array.isArray(group.properties)) continue
    for (const p of group.properties) if (isObject(p)) yield p
  }
}

/** What to read before validating these filters: the cohort ids they name, and whether they name flags. */
export function referencesOf(filters: unknown): { cohortIds: number[]; flags: boolean } {
  const cohortIds = new Set<number>()
  let flags = false
  for (const p of conditionProperties(filters)) {
    if (p.type === 'flag') flags = true
    if (p.type === 'cohort') {
      const id = safeInt(p.value)
      if (id !== null && id >= 0 && id <= 2_147_483_647) cohortIds.add(id)
    }
  }
  return { cohortIds: [...cohortIds], flags }
}

/** "a (ID: 1), b (ID: 2), and 3 more": at most five named. */
export function flagListing(flags: readonly { id: number; key: string }[]): string {
  const names = flags.slice(0, 5).map((f) => `${f.key} (ID: ${f.id})`)
  if (flags.length > 5) names.push(`and ${flags.length - 5} more`)
  return names.join(', ')
}

// ---------------------------------------------------------------------------------------------------
// dependencies

/** The key of the flag an id names; refused unless it is an active flag of the project that is not deleted. */
function referencedKey(reference: unknown, byId: ReadonlyMap<number, FlagRef>): string {
  const id = safeInt(reference)
  if (id === null) {
    invalid(`Flag dependencies must reference flag IDs (integers), not flag keys. Invalid reference: '${pyStr(reference)}'`)
  }
  const flag = byId.get(id)
  if (!flag) invalid(`Flag dependency references non-existent flag with ID ${id}`)
  if (!flag.active) invalid(`Cannot create dependency on disabled flag '${flag.key}' (ID: ${id}). Flag dependencies must reference active flags only.`)
  return flag.key
}

function dependencyKeys(references: readonly unknown[], byId: ReadonlyMap<number, FlagRef>): string[] {
  const keys: string[] = []
  for (const reference of references) {
    // PostHog skips an empty key
    if (reference === '' || reference === null || reference === undefined || reference === 0) continue
    const key = referencedKey(reference, byId)
    if (!keys.includes(key)) keys.push(key)
  }
  return keys
}

/**
 * PostHog's `_check_flag_circular_dependencies`: every dependency named by id and usable, not the flag itself, and
 * no path back to the flag through the stored flags ("Circular dependency detected: a → c → b → a").
 */
export function checkDependencies(filters: Record<string, unknown>, refs: FilterReferences): void {
  const self = refs.selfKey
  if (!self) return
  const references: unknown[] = []
  for (const p of conditionProperties(filters)) if (p.type === 'flag') references.push(p.key)
  if (references.length === 0) return
  const byId = new Map(refs.flags.map((f) => [f.id, f]))
  const byKey = new Map(refs.flags.map((f) => [f.key, f]))
  const direct = dependencyKeys(references, byId)
  if (direct.includes(self)) invalid(`Feature flag '${self}' cannot depend on itself`)
  // depth-first over the stored flags; a flag fully explored once cannot lead back to the current path
  const explored = new Set<string>()
  const visit = (key: string, path: string[]): void => {
    const at = path.indexOf(key)
    if (at >= 0) invalid(`Circular dependency detected: ${[...path.slice(at), key].join(' → ')}`)
    if (explored.has(key)) return
    const flag = byKey.get(key)
    if (flag) for (const next of dependencyKeys(flag.dependencies, byId)) visit(next, [...path, key])
    explored.add(key)
  }
  for (const key of direct) visit(key, [self])
}

// ---------------------------------------------------------------------------------------------------
// cohorts

function hasBehaviouralFilter(node: unknown, depth = 0): boolean {
  if (depth > 64) return false
  if (Array.isArray(node)) return node.some((v) => hasBehaviouralFilter(v, depth + 1))
  if (!isObject(node)) return false
  if (node.type === 'behavioral') return true
  for (const v of Object.values(node)) if (v !== null && typeof v === 'object' && hasBehaviouralFilter(v, depth + 1)) return true
  return false
}

/** The cohort and every cohort it nests (known ones), in depth-first order. */
function withDependencies(root: CohortRef, cohorts: ReadonlyMap<number, CohortRef>): CohortRef[] {
  const out: CohortRef[] = []
  const seen = new Set<number>()
  const walk = (c: CohortRef): void => {
    if (seen.has(c.id)) return
    seen.add(c.id)
    out.push(c)
    for (const id of nestedIds(c.filters)) {
      const n = cohorts.get(id)
      if (n) walk(n)
    }
  }
  walk(root)
  return out
}

/** Ids of the cohort filters anywhere in a cohort's filters. */
export function nestedIds(filters: unknown, depth = 0, out: number[] = []): number[] {
  if (depth > 64) return out
  if (Array.isArray(filters)) for (const v of filters) nestedIds(v, depth + 1, out)
  else if (isObject(filters)) {
    if (filters.type === 'cohort') {
      const id = safeInt(filters.value)
      if (id !== null && !out.includes(id)) out.push(id)
    }
    for (const [k, v] of Object.entries(filters)) if (k !== 'value' && v !== null && typeof v === 'object') nestedIds(v, depth + 1, out)
  }
  return out
}

/** A cohort filter of a flag condition: the cohort exists in the project, and nothing in it is behavioural. */
export function checkCohortFilter(prop: Record<string, unknown>, refs: FilterReferences): void {
  const id = safeInt(prop.value)
  const cohort = id === null ? undefined : refs.cohorts.get(id)
  if (!cohort) invalid(`Cohort with id ${pyStr(prop.value ?? null)} does not exist`, 'cohort_does_not_exist')
  for (const c of withDependencies(cohort, refs.cohorts)) {
    if (hasBehaviouralFilter(c.filters)) {
      invalid(`Cohort '${c.name ?? 'None'}' with filters on events cannot be used in feature flags.`, 'behavioral_cohort_found')
    }
  }
}
