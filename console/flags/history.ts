// A flag's recorded change in words (pure: unit-tested in history.test.ts). The history API gives each changed
// field's whole value before and after; for the release conditions that is a JSON document a person cannot read,
// so each condition set, the variants and the payloads are compared and told apart in sentences.
import { OPERATORS, type Condition, type FlagProperty, type Variant } from './types'

export interface FieldChange {
  field: string
  before: unknown
  after: unknown
}

/** How one changed field reads: a label and its before → after (null: it did not exist). */
export interface ChangeLine {
  label: string
  before: string | null
  after: string | null
}

const FIELD_NAMES: Record<string, string> = {
  key: 'Key',
  name: 'Name',
  active: 'Enabled',
  deleted: 'Deleted',
  rollout_percentage: 'Rollout percentage',
  ensure_experience_continuity: 'Experience continuity',
}

const OPERATOR_WORDS: Record<string, string> = { ...Object.fromEntries(OPERATORS), gte: 'at least', lte: 'at most', flag_evaluates_to: 'is' }

/** Longer texts are cut (the whole value is in the API's answer). */
const MOST = 160

function cut(text: string): string {
  return text.length > MOST ? `${text.slice(0, MOST - 1)}…` : text
}

function plain(value: unknown): string {
  if (value === null || value === undefined) return 'none'
  return cut(typeof value === 'string' ? value : JSON.stringify(value))
}

function valuesText(value: unknown): string {
  return Array.isArray(value) ? value.map((v) => plain(v)).join(' or ') : plain(value)
}

/** One filter in words: `plan equals pro`, `in cohort 4`, `flag beta is true`. */
export function filterText(filter: FlagProperty): string {
  if (filter.type === 'cohort') return `in cohort ${plain(filter.value)}`
  if (filter.type === 'flag') return `flag ${filter.key} is ${plain(filter.value)}`
  const operator = filter.operator ?? 'exact'
  const words = OPERATOR_WORDS[operator] ?? operator
  if (operator === 'is_set' || operator === 'is_not_set') return `${filter.key} ${words}`
  return `${filter.key} ${words} ${valuesText(filter.value)}`
}

/** One condition set in words: `50% of users where plan equals pro and in cohort 4, variant test`. */
export function conditionText(condition: Partial<Condition>): string {
  const pct = condition.rollout_percentage ?? 100
  const filters = (condition.properties ?? []).map(filterText)
  const who = filters.length ? `users where ${filters.join(' and ')}` : 'all users'
  return cut(`${pct}% of ${who}${condition.variant ? `, variant ${condition.variant}` : ''}`)
}

function variantsText(variants: Variant[]): string {
  return variants.length ? variants.map((v) => `${v.key} ${v.rollout_percentage}%`).join(', ') : 'none (a boolean flag)'
}

type Filters = { groups?: Partial<Condition>[]; multivariate?: { variants?: Variant[] } | null; payloads?: Record<string, unknown> | null }

function asFilters(value: unknown): Filters {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Filters) : {}
}

/** The release conditions' change: each condition set, the variants and each payload that differ. */
function filterLines(beforeValue: unknown, afterValue: unknown): ChangeLine[] {
  const before = asFilters(beforeValue)
  const after = asFilters(afterValue)
  const lines: ChangeLine[] = []
  const groupsBefore = before.groups ?? []
  const groupsAfter = after.groups ?? []
  for (let i = 0; i < Math.max(groupsBefore.length, groupsAfter.length); i++) {
    const was = groupsBefore[i] ? conditionText(groupsBefore[i]) : null
    const now = groupsAfter[i] ? conditionText(groupsAfter[i]) : null
    if (was !== now) lines.push({ label: `Condition set ${i + 1}`, before: was, after: now })
  }
  const variantsBefore = variantsText(before.multivariate?.variants ?? [])
  const variantsAfter = variantsText(after.multivariate?.variants ?? [])
  if (variantsBefore !== variantsAfter) lines.push({ label: 'Variants', before: variantsBefore, after: variantsAfter })
  const payloadsBefore = before.payloads ?? {}
  const payloadsAfter = after.payloads ?? {}
  for (const key of new Set([...Object.keys(payloadsBefore), ...Object.keys(payloadsAfter)])) {
    const was = key in payloadsBefore ? plain(payloadsBefore[key]) : null
    const now = key in payloadsAfter ? plain(payloadsAfter[key]) : null
    if (was !== now) lines.push({ label: key === 'true' ? 'Payload' : `Payload for ${key}`, before: was, after: now })
  }
  // anything else in the filters (group aggregation, …) as it is
  const { groups: _g1, multivariate: _m1, payloads: _p1, ...restBefore } = before
  const { groups: _g2, multivariate: _m2, payloads: _p2, ...restAfter } = after
  if (JSON.stringify(restBefore) !== JSON.stringify(restAfter)) lines.push({ label: 'Other release settings', before: plain(restBefore), after: plain(restAfter) })
  return lines
}

/** Every line one recorded change reads as. */
export function changeLines(change: FieldChange): ChangeLine[] {
  if (change.field === 'filters') return filterLines(change.before, change.after)
  const label = FIELD_NAMES[change.field] ?? change.field
  const words = (v: unknown) => (typeof v === 'boolean' ? (v ? 'true' : 'false') : plain(v))
  return [{ label, before: words(change.before), after: words(change.after) }]
}
