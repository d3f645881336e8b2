// What one project's flags and cohorts may cost, all together. Every process holds each active project's flags and
// the cohorts they use compiled in memory, and local_evaluation (and /flags/definitions) sends them whole to every
// server SDK, with each flag-on-flag filter carrying the dependency's chain of keys. Per-flag limits (limits.ts) do
// not bound that: 40 flags of 1 MB, or one flag of 10,000 references to a flag deep in a chain of 60, made answers
// of hundreds of megabytes; 1,500 flags of long names and keys made a 34 MB local_evaluation answer and 1.5 MB
// anonymous /flags answers. So a write is refused when it would make
// - the project's footprint (each flag as local evaluation sends it: its filters, key and name as JSON and the
//   fields every flag carries, plus every dependency chain as local evaluation writes it, plus its cohorts'
//   filters) larger than PROJECT_LIMITS.footprintBytes, or
// - its flags' keys, all together, longer than PROJECT_LIMITS.keysBytes (every /flags and /decide answer, even an
//   anonymous one, carries every key: twice in /flags v2), or
// - a chain of flags depending on flags, through the flag written, longer than PROJECT_LIMITS.dependencyDepth.
// A write that makes none worse than it was is accepted (a project over a limit set later can still shrink).
// Pure: the caller reads the stored flags (references.ts) under the project's write lock.
import { errors } from '../http/errors'
import { safeInt } from './reference-checks'

export const PROJECT_LIMITS = {
  /** flags as local evaluation sends them (filters, keys, names, fixed fields) + dependency chains + cohorts' filters, in bytes of JSON */
  footprintBytes: 16 * 1024 * 1024,
  /** the keys of the project's flags (not deleted), as JSON, all together */
  keysBytes: 256 * 1024,
  /** flags in one chain of flags depending on flags (the first included) */
  dependencyDepth: 10,
} as const

/**
 * What local evaluation writes for each flag besides its filters, key and name: ids, version, flags and field names
 * (serialize.ts minimalFlagJson; its test checks this covers them).
 */
export const FLAG_FIXED_BYTES = 260

/** A string's bytes as JSON (quotes and escapes included): what an answer spends on a key or a name. */
export const jsonBytes = (text: string): number => Buffer.byteLength(JSON.stringify(text))

/** A flag's own share of the footprint, as references.ts measures the stored ones in SQL. */
export function flagBytes(flag: { key: string; name: string; filters: unknown }): number {
  return Buffer.byteLength(JSON.stringify(flag.filters ?? {})) + jsonBytes(flag.key) + jsonBytes(flag.name) + FLAG_FIXED_BYTES
}

export interface FlagFootprint {
  id: number
  key: string
  /** its filters, key and name as JSON, and FLAG_FIXED_BYTES (flagBytes) */
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

export interface ProjectMeasure {
  /** the footprint */
  bytes: number
  /** the keys, as JSON */
  keyBytes: number
  /** the longest chain of dependencies through the flag written */
  depth: number
}

/** Footprint in bytes, keys in bytes, and the longest chain of dependencies through `through` (0 when not given). */
export function measure(flags: readonly FlagFootprint[], cohortBytes: number, through: number | null = null): ProjectMeasure {
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
  let keyBytes = 0
  for (const flag of flags) {
    bytes += flag.bytes
    keyBytes += jsonBytes(flag.key)
    for (const d of flag.dependencies) {
      const id = safeInt(d)
      // `"dependency_chain": [...]` and the dependency's key in place of its id
      if (id !== null && byId.has(id)) bytes += 22 + bytesOfChain(id) + JSON.stringify(byId.get(id)!.key).length
    }
  }
  if (through === null || !byId.has(through)) return { bytes, keyBytes, depth: 0 }
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
  return { bytes, keyBytes, depth }
}

export type ProjectLimit = 'depth' | 'keys' | 'footprint'

/**
 * Refuse a write that makes the project's footprint, its keys or a dependency chain exceed its limit (and worse than
 * before); `onRefused` counts it.
 */
export function checkProjectBudget(before: ProjectMeasure, after: ProjectMeasure, onRefused?: (limit: ProjectLimit) => void): void {
  const over = overBudget(before, after)
  if (over === null) return
  onRefused?.(over.limit)
  throw errors.validation('limit_exceeded', over.detail, over.attr)
}

function overBudget(before: ProjectMeasure, after: ProjectMeasure): { limit: ProjectLimit; detail: string; attr: string | null } | null {
  if (after.depth > PROJECT_LIMITS.dependencyDepth && after.depth > before.depth) {
    return { limit: 'depth', detail: `Flags may depend on flags at most ${PROJECT_LIMITS.dependencyDepth} deep; this change makes a chain of ${after.depth}.`, attr: 'filters' }
  }
  if (after.keyBytes > PROJECT_LIMITS.keysBytes && after.keyBytes > before.keyBytes) {
    return {
      limit: 'keys',
      detail: `A project's flag keys may take at most ${PROJECT_LIMITS.keysBytes} bytes all together (every /flags answer carries each of them); this change makes ${after.keyBytes}. Use shorter keys, or delete flags first.`,
      attr: 'key',
    }
  }
  if (after.bytes > PROJECT_LIMITS.footprintBytes && after.bytes > before.bytes) {
    return {
      limit: 'footprint',
      detail: `A project's flags and cohorts may take at most ${PROJECT_LIMITS.footprintBytes} bytes (filters, keys and names as JSON, with each flag dependency's chain as local evaluation sends it); this change makes ${after.bytes}. Remove or simplify flags or cohorts first.`,
      attr: null,
    }
  }
  return null
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
