// Flags that depend on flags: a condition filter `{key: "<flag id>", type: "flag", value, operator:
// "flag_evaluates_to"}` compares another flag's value in the same request. Dependencies are evaluated first
// (a topological order over the project's active flags, computed once per cache load); a flag on a dependency
// cycle, or depending on one, cannot be evaluated (it errors); a dependency that is not an active flag of the
// project is missing, and a filter on it is false.
import type { CompiledFlag } from './compile'
import type { FlagResult } from './types'

/** The flag's value as a dependency sees it: false, true, or the variant. */
export function flagValue(result: FlagResult): boolean | string {
  return result.enabled ? (result.variant ?? true) : false
}

/** `true` matches true or any variant, `false` only false, a string only that exact variant; anything else never. */
export function dependencyMatches(expected: unknown, result: FlagResult): boolean {
  const value = flagValue(result)
  if (expected === true) return value !== false
  if (expected === false) return value === false
  if (typeof expected === 'string') return value === expected
  return false
}

/** The ids a flag depends on (release and super conditions), each once, in the order they appear. */
export function dependencyIdsOf(flag: CompiledFlag): number[] {
  const ids: number[] = []
  const conditions = flag.superCondition.kind === 'properties' || flag.superCondition.kind === 'rollout' ? [...flag.conditions, flag.superCondition.cond] : flag.conditions
  for (const cond of conditions) {
    if (!cond.hasFlag || cond.props === null) continue
    for (const p of cond.props) if (p.isFlag && p.dependencyId !== null && !ids.includes(p.dependencyId)) ids.push(p.dependencyId)
  }
  return ids
}

/** What one request evaluates, and in which order. */
export interface EvaluationPlan {
  /** the flags asked for, followed by the dependencies they need that were not asked for */
  readonly flags: readonly CompiledFlag[]
  /** how many of `flags` were asked for (they come first): only those are answered */
  readonly asked: number
  /** indexes into `flags`, dependencies before their dependents */
  readonly order: readonly number[]
  /** indexes of flags that cannot be evaluated: on a dependency cycle, or depending on one */
  readonly cyclic: ReadonlySet<number>
}

const NO_INDEXES: ReadonlySet<number> = new Set()

function identityPlan(flags: readonly CompiledFlag[]): EvaluationPlan {
  return { flags, asked: flags.length, order: flags.map((_, i) => i), cyclic: NO_INDEXES }
}

/** The dependency graph of a project's active flags. */
export class DependencyGraph {
  /** some active flag depends on another flag */
  readonly hasDependencies: boolean
  private readonly byId = new Map<number, CompiledFlag>()
  private readonly deps = new Map<number, number[]>()
  /** position of each flag id in a dependencies-first order; flags on or behind a cycle are absent */
  private readonly rank = new Map<number, number>()
  private readonly all: readonly CompiledFlag[]
  private allPlan: EvaluationPlan | undefined

  constructor(active: readonly CompiledFlag[]) {
    this.all = active
    let any = false
    for (const flag of active) {
      this.byId.set(flag.id, flag)
      const ids = dependencyIdsOf(flag)
      this.deps.set(flag.id, ids)
      if (ids.length > 0) any = true
    }
    this.hasDependencies = any
    if (!any) return
    // Kahn: a flag is ready once every dependency that is an active flag is placed; the rest are on or behind a cycle.
    const waiting = new Map<number, number>()
    const dependents = new Map<number, number[]>()
    const ready: number[] = []
    for (const flag of active) {
      const present = this.deps.get(flag.id)!.filter((d) => this.byId.has(d))
      waiting.set(flag.id, present.length)
      for (const d of present) {
        const list = dependents.get(d)
        if (list) list.push(flag.id)
        else dependents.set(d, [flag.id])
      }
      if (present.length === 0) ready.push(flag.id)
    }
    for (let i = 0; i < ready.length; i++) {
      const id = ready[i]
      this.rank.set(id, i)
      for (const dependent of dependents.get(id) ?? []) {
        const left = waiting.get(dependent)! - 1
        waiting.set(dependent, left)
        if (left === 0) ready.push(dependent)
      }
    }
  }

  /** The plan for these flags (a subset of the active ones, or all of them). */
  plan(asked: readonly CompiledFlag[]): EvaluationPlan {
    if (asked === this.all && this.allPlan) return this.allPlan
    if (!this.hasDependencies) return asked === this.all ? (this.allPlan = identityPlan(asked)) : identityPlan(asked)
    const flags = [...asked]
    const included = new Set(asked.map((f) => f.id))
    for (let i = 0; i < flags.length; i++) {
      for (const d of this.deps.get(flags[i].id) ?? []) {
        const dependency = this.byId.get(d)
        if (dependency && !included.has(d)) {
          included.add(d)
          flags.push(dependency)
        }
      }
    }
    const cyclic = new Set<number>()
    const order: number[] = []
    for (let i = 0; i < flags.length; i++) {
      if (this.rank.has(flags[i].id)) order.push(i)
      else cyclic.add(i)
    }
    order.sort((a, b) => this.rank.get(flags[a].id)! - this.rank.get(flags[b].id)!)
    const plan: EvaluationPlan = { flags, asked: asked.length, order, cyclic }
    if (asked === this.all) this.allPlan = plan
    return plan
  }
}
