// What server SDKs that evaluate flags locally download (PostHog's local_evaluation): every flag that is not
// deleted, the group type mapping, and with `send_cohorts` the dynamic cohorts those flags use. Made once per cache
// entry and kind, with an ETag.
//
// Flag filters on other flags are sent as PostHog sends them: `key` becomes the dependency's flag key and
// `dependency_chain` lists the keys a client must evaluate first, dependencies first, ending with the dependency
// itself ([] for a self-dependency, a cycle, or a flag that is not sent). Static cohorts are left out on purpose:
// a client that meets one asks the server.
import { createHash } from 'node:crypto'
import type { ProjectEntry } from './cache'
import type { CachedFlagRow } from './repository'
import { minimalFlagJson } from './serialize'
import { ApiError } from '../http/errors'
import { PROJECT_LIMITS } from './project-budget'

/**
 * The most the dependency chains of one answer may add. Writes keep a project's whole footprint (chains included)
 * within PROJECT_LIMITS.footprintBytes; this catches data stored before that limit, or by hand, before the answer
 * is built rather than after (a chain is written out once per reference, as PostHog's SDKs read it).
 */
export const MAX_CHAIN_BYTES = PROJECT_LIMITS.footprintBytes * 2

export interface LocalEvaluation {
  body: string
  /** the entity tag, without quotes */
  etag: string
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** A cohort's property group as PostHog's PropertyGroup.to_dict renders it: null-valued keys left out, {} when empty. */
function renderGroup(node: unknown, depth = 0): unknown {
  if (!isObject(node) || depth > 64) return {}
  if (Array.isArray(node.values) && !('key' in node)) {
    if (node.values.length === 0) return {}
    return { type: node.type, values: node.values.map((v) => renderGroup(v, depth + 1)) }
  }
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(node)) if (v !== null && v !== undefined) out[k] = v
  return out
}

function cohortsMap(entry: ProjectEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const c of entry.cohortRows) {
    if (c.is_static) continue
    out[String(c.id)] = renderGroup(isObject(c.filters) ? c.filters.properties : undefined)
  }
  return out
}

/** The id a flag filter names (a JSON integer or its text), or null. */
function idOf(key: unknown): number | null {
  if (typeof key === 'number') return Number.isInteger(key) ? key : null
  if (typeof key === 'string' && /^\s*\d{1,15}\s*$/.test(key)) return Number(key)
  return null
}

function dependencyIds(filters: unknown): number[] {
  const ids: number[] = []
  const groups = isObject(filters) && Array.isArray(filters.groups) ? filters.groups : []
  for (const g of groups) {
    for (const p of isObject(g) && Array.isArray(g.properties) ? g.properties : []) {
      const id = isObject(p) && p.type === 'flag' ? idOf(p.key) : null
      if (id !== null && !ids.includes(id)) ids.push(id)
    }
  }
  return ids
}

/** Rewrites each flag's dependency filters for local evaluation; flags without any are sent unchanged. */
function withDependencyChains(rows: readonly CachedFlagRow[]): unknown[] {
  const flags = rows.map(minimalFlagJson)
  const byId = new Map(flags.map((f) => [f.id, f]))
  const deps = new Map(flags.map((f) => [f.id, dependencyIds(f.filters)]))
  if (![...deps.values()].some((d) => d.length > 0)) return flags
  const chains = new Map<number, string[]>()
  /** the keys to evaluate for `id`, dependencies first and `id` last; [] when a cycle or a missing flag is met */
  const chainOf = (id: number): string[] => {
    const known = chains.get(id)
    if (known) return known
    const order: string[] = []
    const onPath = new Set<number>()
    const done = new Set<number>()
    const visit = (at: number): boolean => {
      if (done.has(at)) return true
      if (onPath.has(at) || !byId.has(at)) return false
      onPath.add(at)
      for (const d of deps.get(at) ?? []) if (!visit(d)) return false
      onPath.delete(at)
      done.add(at)
      order.push(byId.get(at)!.key)
      return true
    }
    const chain = visit(id) ? order : []
    chains.set(id, chain)
    return chain
  }
  // what the chains will add, counted before anything is built
  let chainBytes = 0
  for (const f of flags) {
    for (const g of f.filters.groups ?? []) {
      for (const p of isObject(g) && Array.isArray(g.properties) ? g.properties : []) {
        const id = isObject(p) && p.type === 'flag' ? idOf(p.key) : null
        if (id === null || id === f.id || !byId.has(id)) continue
        for (const key of chainOf(id)) chainBytes += key.length + 3
      }
    }
    if (chainBytes > MAX_CHAIN_BYTES) {
      throw new ApiError(
        503,
        'server_error',
        'local_evaluation_too_large',
        `This project's flag dependencies would make a local evaluation answer of more than ${MAX_CHAIN_BYTES} bytes of dependency chains: simplify the flags that depend on flags, then retry.`,
      )
    }
  }
  return flags.map((f) => {
    if (deps.get(f.id)!.length === 0) return f
    const groups = (f.filters.groups ?? []).map((g) => {
      if (!isObject(g) || !Array.isArray(g.properties)) return g
      const properties = g.properties.map((p: unknown) => {
        if (!isObject(p) || p.type !== 'flag') return p
        const id = idOf(p.key)
        const target = id === null ? undefined : byId.get(id)
        if (!target) return { ...p, dependency_chain: [] }
        // a flag depending on itself has no chain
        const chain = id === f.id ? [] : chainOf(id!)
        return { ...p, key: target.key, dependency_chain: chain.includes(f.key) ? [] : chain }
      })
      return { ...g, properties }
    })
    return { ...f, filters: { ...f.filters, groups } }
  })
}

/** The local_evaluation body of a cache entry (with `send_cohorts`: the cohorts map; without: `{}`). */
export function localEvaluationOf(entry: ProjectEntry, sendCohorts: boolean): LocalEvaluation {
  const memo = sendCohorts ? entry.localEvaluationWithCohorts : entry.localEvaluation
  if (memo) return memo
  const mapping: Record<string, string> = {}
  for (const [index, name] of entry.groupTypeNames) mapping[String(index)] = name
  const body = JSON.stringify({ flags: withDependencyChains(entry.rows), group_type_mapping: mapping, cohorts: sendCohorts ? cohortsMap(entry) : {} })
  const made = { body, etag: createHash('sha256').update(body).digest('hex').slice(0, 32) }
  if (sendCohorts) entry.localEvaluationWithCohorts = made
  else entry.localEvaluation = made
  return made
}
