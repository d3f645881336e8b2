// compileFlag: turn a stored flag definition into the shape evaluation needs, once.
//
// Faithfulness to the Python server includes *when* malformed data fails: FM raises only when the
// broken part is reached (a broken condition after a matching one is harmless; a broken variant list
// only matters once a condition matches). So breakage is recorded where it lives and turned into an
// `evaluation_error` outcome when evaluation reaches it. Only a flag whose filters cannot be read at
// all, or whose condition list cannot even be sorted, is broken as a whole.
import type { MemoTable } from './hash-memo'
import { compileProperty, type CompiledProperty, pyTruthy } from './operators'
import { pyStr } from './python/pyvalue'
import type { FlagDefinition, FlagOutcome } from './types'

/** A rollout percentage: null (not set), a number, or 'error' (Python's `/ 100` would raise). */
export type Rollout = number | null | 'error'

export interface CompiledCondition {
  /** Index in the flag's own order: what `condition_index` reports. */
  readonly index: number
  /** null when the condition has no properties (it is then a pure rollout). */
  readonly props: readonly CompiledProperty[] | null
  /** The properties could not be read: evaluating this condition is an error. */
  readonly propsError: boolean
  readonly rollout: Rollout
  readonly variant: unknown
  /** every property uses is_not / is_not_set (matches when the person/group does not exist) */
  readonly pureIsNot: boolean
  /** person or group property keys the condition reads (cohort and flag filters excluded) */
  readonly keys: readonly string[]
  /** uses a cohort filter (its cohort's filters or members may need stored data) */
  readonly hasCohort: boolean
  /** uses another flag's value (a dependency) */
  readonly hasFlag: boolean
}

export interface VariantSlot {
  readonly key: string
  readonly min: number
  readonly max: number
}

export type SuperCondition =
  | { readonly kind: 'none' }
  | { readonly kind: 'error' }
  /** first super group has properties: `isSetKey` decides whether it applies, `cond` gives the value */
  | { readonly kind: 'properties'; readonly isSetKey: string | null; readonly cond: CompiledCondition }
  /** first super group has no properties: a rollout that decides the flag at once */
  | { readonly kind: 'rollout'; readonly cond: CompiledCondition }

export type HoldoutCondition =
  | { readonly kind: 'none' }
  | { readonly kind: 'error' }
  | { readonly kind: 'rollout'; readonly rollout: Rollout; readonly variant: unknown }

export interface CompiledFlag {
  readonly id: number
  readonly key: string
  readonly active: boolean
  readonly deleted: boolean
  readonly version: number
  readonly ensureExperienceContinuity: boolean
  /** `<key>.`: what every rollout and variant hash of this flag starts with, built once */
  readonly hashPrefix: string
  /** the key encodes to UTF-8 (Python raises on a lone surrogate when hashing) */
  readonly keyWellFormed: boolean
  readonly definition: FlagDefinition
  /** The flag cannot be evaluated at all (evaluates to `evaluation_error`). */
  readonly broken: boolean
  /** `filters.aggregation_group_type_index` (null: a person flag). */
  readonly aggregationGroupTypeIndex: unknown
  /** Release conditions, stably sorted so that those with a variant override come first. */
  readonly conditions: readonly CompiledCondition[]
  /** Variant keys, or 'error' when the variant list is malformed (raises once a condition matches). */
  readonly variantKeys: readonly unknown[] | 'error'
  /** The lookup table, or 'error' when a variant has no usable rollout_percentage. */
  readonly variantTable: readonly VariantSlot[] | 'error'
  /** `filters.payloads or {}`, or 'error' when it is not an object (raises on a match). */
  readonly payloads: Readonly<Record<string, unknown>> | 'error'
  readonly superCondition: SuperCondition
  readonly holdout: HoldoutCondition
  /**
   * The outcomes this flag has given, each made once (evaluate.ts): an outcome is a value of the flag and its
   * (enabled, reason, condition, variant), so requests share them instead of allocating two objects per flag.
   * Bounded by the definition: conditions × reasons × variants.
   */
  readonly outcomes: Map<number, Map<string | null, FlagOutcome & { ok: true }>>
  /** the same for outcomes without a variant (most of them), by slot: an array read instead of two map lookups */
  readonly plainOutcomes: ((FlagOutcome & { ok: true }) | undefined)[]
  /**
   * Left to whoever writes answers: its text of this flag, made once per compiled flag (decide/response.ts). A
   * property of the flag rather than a WeakMap entry: read for every flag of every answer, and a WeakMap lookup
   * cost as much as writing the member.
   */
  answerText: unknown
  /**
   * Where the hash memo keeps this flag's hashes as an array slot (hash-memo.ts): the project's table of active
   * flags it was last placed in, and its index there. Set by the flag cache; null outside it (a map lookup then).
   */
  memoTable: MemoTable | null
  memoSlot: number
}

/** A lone surrogate has no UTF-8 form: Python's str.encode raises where JS would hash U+FFFD. */
export function isWellFormed(s: string): boolean {
  return s.isWellFormed()
}

/** `<key>.` as one flat string: later concatenations with an identifier copy one piece, not a rope. */
function hashPrefixOf(key: string): string {
  const prefix = `${key}.`
  return prefix.split('').join('')
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function readRollout(v: unknown): Rollout {
  if (v === null || v === undefined) return null
  if (typeof v === 'number') return v
  if (typeof v === 'boolean') return v ? 1 : 0 // Python: True / 100
  return 'error'
}

/** Flatten `properties` (a list, or a property group `{type, values}`) into the filters it ANDs. */
function flattenProperties(v: unknown, out: unknown[]): void {
  if (Array.isArray(v)) {
    for (const item of v) {
      if (isObject(item) && !('key' in item) && Array.isArray(item.values)) flattenProperties(item.values, out)
      else out.push(item)
    }
    return
  }
  if (isObject(v) && Array.isArray(v.values)) {
    flattenProperties(v.values, out)
    return
  }
  throw new Error('properties are neither a list nor a property group')
}

function compileCondition(raw: Record<string, unknown>, index: number): CompiledCondition {
  const rollout = readRollout(raw.rollout_percentage)
  let props: CompiledProperty[] | null = null
  let propsError = false
  let pureIsNot = false
  const keys: string[] = []
  let hasCohort = false
  let hasFlag = false
  if (pyTruthy(raw.properties)) {
    try {
      const flat: unknown[] = []
      flattenProperties(raw.properties, flat)
      props = flat.map(compileProperty)
      if (props.length === 0) props = null
    } catch {
      props = null
      propsError = true
    }
    if (props !== null) {
      pureIsNot = props.every((p) => p.negativeOperator)
      for (const p of props) {
        if (p.isCohort) hasCohort = true
        else if (p.isFlag) hasFlag = true
        else if (!keys.includes(p.key)) keys.push(p.key)
      }
    }
  }
  return { index, props, propsError, rollout, variant: raw.variant, pureIsNot, keys, hasCohort, hasFlag }
}

function compileVariants(multivariate: unknown): Pick<CompiledFlag, 'variantKeys' | 'variantTable'> {
  if (!isObject(multivariate) || !Array.isArray(multivariate.variants)) return { variantKeys: [], variantTable: [] }
  const keys: unknown[] = []
  const table: VariantSlot[] = []
  let tableOk = true
  let min = 0
  for (const v of multivariate.variants as unknown[]) {
    // variant["key"] raises KeyError (or TypeError for a non-dict) on the first match
    if (!isObject(v) || !('key' in v)) return { variantKeys: 'error', variantTable: 'error' }
    keys.push(v.key)
    const pct = readRollout(v.rollout_percentage)
    if (pct === null || pct === 'error') tableOk = false
    else if (tableOk) {
      const max = min + pct / 100
      table.push({ key: typeof v.key === 'string' ? v.key : pyStr(v.key), min, max })
      min = max
    }
  }
  return { variantKeys: keys, variantTable: tableOk ? table : 'error' }
}

function compileSuper(superGroups: unknown): SuperCondition {
  if (!pyTruthy(superGroups)) return { kind: 'none' }
  if (!Array.isArray(superGroups) || !isObject(superGroups[0])) return { kind: 'error' }
  const raw = superGroups[0]
  const cond = compileCondition(raw, 0)
  if (!pyTruthy(raw.properties)) return { kind: 'rollout', cond }
  // FM reads `(properties or [{}])[0].get("key")`; without a (truthy) key the super condition is never
  // queried, so it is "not set" and evaluation falls through to the release conditions.
  if (!Array.isArray(raw.properties) || !isObject(raw.properties[0])) return { kind: 'error' }
  const firstKey: unknown = raw.properties[0].key
  if (!pyTruthy(firstKey)) return { kind: 'properties', isSetKey: null, cond }
  if (typeof firstKey !== 'string' || cond.propsError) return { kind: 'error' }
  return { kind: 'properties', isSetKey: firstKey, cond }
}

function compileHoldout(holdoutGroups: unknown): HoldoutCondition {
  if (!pyTruthy(holdoutGroups)) return { kind: 'none' }
  if (!Array.isArray(holdoutGroups) || !isObject(holdoutGroups[0])) return { kind: 'error' }
  const raw = holdoutGroups[0]
  // Holdout groups with properties are not evaluated by the server (a TODO there): never a match.
  if (pyTruthy(raw.properties)) return { kind: 'none' }
  return { kind: 'rollout', rollout: readRollout(raw.rollout_percentage), variant: raw.variant }
}

function brokenFlag(def: FlagDefinition): CompiledFlag {
  const d = (isObject(def) ? def : {}) as Partial<FlagDefinition>
  return {
    id: typeof d.id === 'number' ? d.id : 0,
    key: typeof d.key === 'string' ? d.key : String(d.key),
    active: d.active === true,
    deleted: d.deleted === true,
    version: typeof d.version === 'number' ? d.version : 1,
    ensureExperienceContinuity: d.ensure_experience_continuity === true,
    hashPrefix: '',
    keyWellFormed: false,
    definition: def,
    broken: true,
    aggregationGroupTypeIndex: null,
    conditions: [],
    variantKeys: 'error',
    variantTable: 'error',
    payloads: 'error',
    superCondition: { kind: 'none' },
    holdout: { kind: 'none' },
    outcomes: new Map(),
    plainOutcomes: [],
    answerText: undefined,
    memoTable: null,
    memoSlot: -1,
  }
}

/**
 * Precompile a flag: legacy conversion, sorted conditions, compiled regexes and parsed filter values,
 * the variant lookup table, and the property keys each condition reads. Never throws.
 */
export function compileFlag(def: FlagDefinition): CompiledFlag {
  try {
    if (!isObject(def) || typeof def.key !== 'string') return brokenFlag(def)
    const rawFilters: unknown = def.filters
    if (!isObject(rawFilters)) return brokenFlag(def)
    // FeatureFlag.get_filters(): without a `groups` key the flag is a legacy one, and only the
    // synthesized condition exists (no variants, payloads, super/holdout groups or aggregation).
    const filters: Record<string, unknown> = Object.hasOwn(rawFilters, 'groups')
      ? rawFilters
      : { groups: [{ properties: Object.hasOwn(rawFilters, 'properties') ? rawFilters.properties : [], rollout_percentage: def.rollout_percentage ?? null }] }

    const groups: unknown = pyTruthy(filters.groups) ? filters.groups : []
    if (!Array.isArray(groups) || !groups.every(isObject)) return brokenFlag(def)
    const conditions = (groups as Record<string, unknown>[]).map(compileCondition)
    // Stable sort: conditions with a (truthy) variant override first.
    conditions.sort((a, b) => (pyTruthy(a.variant) ? 0 : 1) - (pyTruthy(b.variant) ? 0 : 1))

    const rawPayloads: unknown = pyTruthy(filters.payloads) ? filters.payloads : {}
    const payloads = isObject(rawPayloads) ? rawPayloads : 'error'

    const aggregation: unknown = filters.aggregation_group_type_index ?? null

    return {
      id: typeof def.id === 'number' ? def.id : 0,
      key: def.key,
      active: def.active === true,
      deleted: def.deleted === true,
      version: typeof def.version === 'number' ? def.version : 1,
      ensureExperienceContinuity: def.ensure_experience_continuity === true,
      hashPrefix: hashPrefixOf(def.key),
      keyWellFormed: isWellFormed(def.key),
      definition: def,
      broken: false,
      aggregationGroupTypeIndex: aggregation,
      conditions,
      ...compileVariants(filters.multivariate),
      payloads,
      superCondition: compileSuper(filters.super_groups),
      holdout: compileHoldout(filters.holdout_groups),
      outcomes: new Map(),
      plainOutcomes: [],
      answerText: undefined,
      memoTable: null,
      memoSlot: -1,
    }
  } catch {
    return brokenFlag(def)
  }
}
