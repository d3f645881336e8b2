// Cohorts as flag conditions use them: compiled once per cache load, evaluated per request with no I/O.
//
// A static cohort is a set of persons: the caller hands in the ids of the static cohorts the requesting person
// belongs to. A dynamic cohort is its filter tree (`{type: AND|OR, values: [group | filter]}`, any depth) evaluated
// on the person's stored properties merged with the request's overrides (overrides win per key), as PostHog's
// Rust evaluator does. A filter is a person property (operators as in flag conditions), a nested cohort, or
// something this service cannot evaluate (behavioural filters: the flag errors, as PostHog's Python server does).
// `negation: true` inverts a filter in AND and OR groups alike. An unknown, deleted or unreadable cohort is false.
import { compileProperty, type CompiledProperty, matchAbsent, matchPresent, readId } from './operators'

/** A cohort as stored (deleted cohorts are not handed in: they are unknown, hence false). */
export interface CohortDefinition {
  id: number
  is_static: boolean
  filters: unknown
}

type CohortNode =
  | { readonly kind: 'group'; readonly and: boolean; readonly values: readonly CohortNode[] }
  | { readonly kind: 'person'; readonly property: CompiledProperty; readonly negation: boolean }
  | { readonly kind: 'cohort'; readonly id: number | null; readonly negation: boolean }
  /** a behavioural (or otherwise unknown) filter: evaluating it is an error */
  | { readonly kind: 'unsupported' }

export interface CompiledCohort {
  readonly id: number
  readonly isStatic: boolean
  /** null: the filters cannot be read; the cohort matches nobody */
  readonly root: CohortNode | null
  /** person property keys read by this cohort and, transitively, the cohorts it nests */
  readonly keys: readonly string[]
  /** it is static, or nests a static cohort: the person's memberships are needed */
  readonly usesMembership: boolean
}

/** Deeper trees than this (groups and nested cohorts together) are refused by the API; here they match nobody. */
export const MAX_COHORT_DEPTH = 16

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

class Unreadable extends Error {}

function compileNode(raw: unknown, depth: number): CohortNode {
  if (depth > MAX_COHORT_DEPTH || !isObject(raw)) throw new Unreadable()
  if (Array.isArray(raw.values) && !('key' in raw)) {
    const type = raw.type ?? 'AND'
    // PostHog's UI writes AND / OR; `property` is an old spelling of AND
    if (type !== 'AND' && type !== 'OR' && type !== 'property') throw new Unreadable()
    return { kind: 'group', and: type !== 'OR', values: raw.values.map((v) => compileNode(v, depth + 1)) }
  }
  const negation = raw.negation === true
  if (raw.type === 'cohort') return { kind: 'cohort', id: readId(raw.value), negation }
  // filters written without a type are person filters (PostHog's legacy groups)
  if (raw.type === 'person' || raw.type === undefined || raw.type === null) {
    return { kind: 'person', property: compileProperty(raw), negation }
  }
  return { kind: 'unsupported' }
}

/** The filter tree of a cohort's `filters` (`{properties: group}`); an empty or absent group matches everyone. */
function compileRoot(filters: unknown): CohortNode | null {
  try {
    const properties = isObject(filters) ? filters.properties : undefined
    if (properties === undefined || properties === null) return { kind: 'group', and: true, values: [] }
    if (isObject(properties) && Object.keys(properties).length === 0) return { kind: 'group', and: true, values: [] }
    const root = compileNode(properties, 0)
    return root.kind === 'group' ? root : { kind: 'group', and: true, values: [root] }
  } catch {
    return null
  }
}

function collect(node: CohortNode | null, keys: Set<string>, nested: Set<number>): void {
  if (node === null) return
  if (node.kind === 'group') for (const v of node.values) collect(v, keys, nested)
  else if (node.kind === 'person') keys.add(node.property.key)
  else if (node.kind === 'cohort' && node.id !== null) nested.add(node.id)
}

/** The cohorts of one project, compiled; what evaluation reads. */
export class CohortSet {
  private readonly byId = new Map<number, CompiledCohort>()
  readonly size: number

  constructor(definitions: readonly CohortDefinition[], reuse?: CohortSet, isUnchanged?: (id: number) => boolean) {
    const direct = new Map<number, { root: CohortNode | null; isStatic: boolean; keys: Set<string>; nested: Set<number> }>()
    for (const d of definitions) {
      const kept = reuse && isUnchanged?.(d.id) ? reuse.byId.get(d.id) : undefined
      const root = kept ? kept.root : d.is_static ? null : compileRoot(d.filters)
      const keys = new Set<string>()
      const nested = new Set<number>()
      collect(root, keys, nested)
      direct.set(d.id, { root, isStatic: d.is_static, keys, nested })
    }
    // what each cohort reads transitively (a loop that got stored anyway is walked once)
    for (const [id, c] of direct) {
      const keys = new Set(c.keys)
      let usesMembership = c.isStatic
      const seen = new Set<number>([id])
      const stack = [...c.nested]
      while (stack.length > 0) {
        const next = stack.pop()!
        if (seen.has(next)) continue
        seen.add(next)
        const n = direct.get(next)
        if (!n) continue
        if (n.isStatic) usesMembership = true
        for (const k of n.keys) keys.add(k)
        for (const m of n.nested) stack.push(m)
      }
      this.byId.set(id, { id, isStatic: c.isStatic, root: c.root, keys: [...keys], usesMembership })
    }
    this.size = this.byId.size
  }

  get(id: number): CompiledCohort | undefined {
    return this.byId.get(id)
  }

  static readonly EMPTY = new CohortSet([])
}

/** Where a person property comes from: the request's overrides, then the stored row (null: no person row). */
export interface PersonSource {
  overrides: Readonly<Record<string, unknown>>
  stored: Readonly<Record<string, unknown>> | null
  /** the static cohorts the person belongs to */
  memberships: ReadonlySet<number>
  now: Date
}

export class UnsupportedCohortFilter extends Error {}

function personFilter(p: CompiledProperty, source: PersonSource): boolean {
  const { overrides, stored } = source
  if (Object.hasOwn(overrides, p.key)) return matchPresent(p, overrides[p.key], source.now)
  if (stored !== null && Object.hasOwn(stored, p.key)) {
    const v = stored[p.key]
    return v === null || v === undefined ? matchAbsent(p, true) : matchPresent(p, v, source.now)
  }
  return matchAbsent(p, false)
}

function nodeMatches(node: CohortNode, set: CohortSet, source: PersonSource, visiting: Set<number>, memo: Map<number, boolean>): boolean {
  switch (node.kind) {
    case 'group':
      if (node.and) {
        for (const v of node.values) if (!nodeMatches(v, set, source, visiting, memo)) return false
        return true
      }
      for (const v of node.values) if (nodeMatches(v, set, source, visiting, memo)) return true
      return false
    case 'person':
      return personFilter(node.property, source) !== node.negation
    case 'cohort':
      return (node.id !== null && inCohort(node.id, set, source, visiting, memo)) !== node.negation
    default:
      throw new UnsupportedCohortFilter('behavioural cohort filters cannot be evaluated for flags')
  }
}

/** Whether the person is in the cohort. `memo` caches results for one person and one set of properties. */
export function inCohort(id: number, set: CohortSet, source: PersonSource, visiting = new Set<number>(), memo = new Map<number, boolean>()): boolean {
  const known = memo.get(id)
  if (known !== undefined) return known
  // a loop that got stored anyway is cut where it closes (the API refuses to create one)
  if (visiting.has(id)) return false
  const cohort = set.get(id)
  let result: boolean
  if (cohort === undefined) result = false
  else if (cohort.isStatic) result = source.memberships.has(id)
  else if (cohort.root === null || visiting.size >= MAX_COHORT_DEPTH) result = false
  else {
    visiting.add(id)
    try {
      result = nodeMatches(cohort.root, set, source, visiting, memo)
    } finally {
      visiting.delete(id)
    }
  }
  memo.set(id, result)
  return result
}

/** A cohort whose answer needs stored data: it reads a key the overrides lack, or needs the person's memberships. */
export function cohortNeedsStored(id: number | null, set: CohortSet, overrides: Readonly<Record<string, unknown>>): boolean {
  if (id === null) return false
  const cohort = set.get(id)
  if (cohort === undefined) return false
  if (cohort.usesMembership) return true
  for (const key of cohort.keys) if (!Object.hasOwn(overrides, key)) return true
  return false
}

/** Whether a cohort (or one it nests) is static: the person's memberships must be loaded to answer it. */
export function cohortUsesMembership(id: number | null, set: CohortSet): boolean {
  return id !== null && set.get(id)?.usesMembership === true
}
