// What one project's flags and cohorts may cost, all together. Every process holds each active project's flags and
// the cohorts they use compiled in memory, and local_evaluation (and /flags/definitions) sends them whole to every
// server SDK, with each flag-on-flag filter carrying the dependency's chain of keys. Per-flag limits (limits.ts) do
// not bound that: 40 flags of 1 MB, or one flag of 10,000 references to a flag deep in a chain of 60, made answers
// of hundreds of megabytes. So a write is refused when it would make
// - the project's footprint (its flags' filters as JSON, plus every dependency chain as local evaluation writes it,
//   plus its cohorts' filters) larger than PROJECT_LIMITS.footprintBytes, or
// - a chain of flags depending on flags, through the flag written, longer than PROJECT_LIMITS.dependencyDepth.
// A write that makes neither worse than it was is accepted (a project over a limit set later can still shrink).
// Pure: the caller reads the stored flags (references.ts) under the project's write lock.
import { errors } from '../http/errors'
import { safeInt } from './reference-checks'

export const PROJECT_LIMITS = {
  /** flags' filters + dependency chains as sent to SDKs + cohorts' filters, in bytes of JSON */
  footprintBytes: 16 * 1024 * 1024,
  /** flags in one chain of flags depending on flags (the first included) */
  dependencyDepth: 10,
} as const

export interface FlagFootprint {
  id: number
  key: string
  /** its filters as JSON text, in bytes */
  bytes: number
  /** the raw `key` of each `type: "flag"` filter of its conditions, every reference (not deduplicated) */
  dependencies: readonly unknown[]
}

/** The ids a flag's references name, each once. */
function dependencyIds(flag: FlagFootprint, byId: ReadonlyMap<number, FlagFootprint>): number[] {
  const ids: number[] = []
  for (const d of flag.dependencies) {
    const id = safeInt(d)
    if (id !== null && byId.has(id) && !ids.includes(id)) ids.push(id)
  }
  return ids
}

/** Footprint in bytes, and the longest chain of dependencies through `through` (0 when not given). */
export function measure(flags: readonly FlagFootprint[], cohortBytes: number, through: number | null = null): { bytes: number; depth: number } {
  const byId = new Map(flags.map((f) => [f.id, f]))
  const deps = new Map(flags.map((f) => [f.id, dependencyIds(f, byId)]))
  // a dependency's chain as local evaluation sends it: the keys of it and of everything it depends on
  const chainBytes = new Map<number, number>()
  const closure = (id: number): Set<number> => {
    const seen = new Set<number>()
    const stack = [id]
    while (stack.length > 0) {
      const at = stack.pop()!
      if (seen.has(at)) continue
      seen.add(at)
      for (const d of deps.get(at) ?? []) stack.push(d)
    }
    return seen
  }
  const bytesOfChain = (id: number): number => {
    let known = chainBytes.get(id)
    if (known === undefined) {
      known = 2
      for (const member of closure(id)) known += JSON.stringify(byId.get(member)!.key).length + 1
      chainBytes.set(id, known)
    }
    return known
  }
  let bytes = cohortBytes
  for (const flag of flags) {
    bytes += flag.bytes
    for (const d of flag.dependencies) {
      const id = safeInt(d)
      // `"dependency_chain": [...]` and the dependency's key in place of its id
      if (id !== null && byId.has(id)) bytes += 22 + bytesOfChain(id) + JSON.stringify(byId.get(id)!.key).length
    }
  }
  if (through === null || !byId.has(through)) return { bytes, depth: 0 }
  // longest path down from the flag and up to it (a cycle stored long ago is cut where it closes)
  const longest = (start: number, next: (id: number) => readonly number[]): number => {
    const memo = new Map<number, number>()
    const onPath = new Set<number>()
    const walk = (at: number): number => {
      const known = memo.get(at)
      if (known !== undefined) return known
      if (onPath.has(at)) return 0
      onPath.add(at)
      let deepest = 0
      for (const n of next(at)) deepest = Math.max(deepest, walk(n))
      onPath.delete(at)
      memo.set(at, deepest + 1)
      return deepest + 1
    }
    return walk(start)
  }
  const dependents = new Map<number, number[]>()
  for (const [id, list] of deps) for (const d of list) dependents.set(d, [...(dependents.get(d) ?? []), id])
  const depth = longest(through, (id) => deps.get(id) ?? []) + longest(through, (id) => dependents.get(id) ?? []) - 1
  return { bytes, depth }
}

/** Refuse a write that makes the project's footprint or a dependency chain exceed its limit (and worse than before). */
export function checkProjectBudget(before: { bytes: number; depth: number }, after: { bytes: number; depth: number }): void {
  if (after.depth > PROJECT_LIMITS.dependencyDepth && after.depth > before.depth) {
    throw errors.validation(
      'limit_exceeded',
      `Flags may depend on flags at most ${PROJECT_LIMITS.dependencyDepth} deep; this change makes a chain of ${after.depth}.`,
      'filters',
    )
  }
  if (after.bytes > PROJECT_LIMITS.footprintBytes && after.bytes > before.bytes) {
    throw errors.validation(
      'limit_exceeded',
      `A project's flags and cohorts may take at most ${PROJECT_LIMITS.footprintBytes} bytes (filters as JSON, with each flag dependency's chain as local evaluation sends it); this change makes ${after.bytes}. Remove or simplify flags or cohorts first.`,
      null,
    )
  }
}

/** The flag properties of new filters, as stored flags list them (`dependencies` of a FlagFootprint). */
export function referencesIn(filters: unknown): unknown[] {
  const out: unknown[] = []
  const groups = (filters as { groups?: unknown } | null)?.groups
  for (const group of Array.isArray(groups) ? groups : []) {
    const properties = (group as { properties?: unknown } | null)?.properties
    for (const p of Array.isArray(properties) ? properties : []) {
      if (p && typeof p === 'object' && (p as { type?: unknown }).type === 'flag' && 'key' in p) out.push((p as { key: unknown }).key)
    }
  }
  return out
}
