// What the experiments API accepts: each member checked against its TypeBox schema (model.ts), the first problem
// answered 400 with the member's path in `attr`; then the rules between members (variants, dates).
import { Value } from '@sinclair/typebox/value'
import type { Static, TSchema } from '@sinclair/typebox'
import { errors } from '../http/errors'
import { assertStorable } from '../http/fields'
import { ActionsNode, Conclusion, EventsNode, ExperimentMetric, ExposureCriteria, MAX_METRICS, Parameters, StatsConfig } from './model'
import type { ExperimentFields } from './repository'

export type Metric = Static<typeof ExperimentMetric>
export type VariantInput = { key: string; name?: string | null; rollout_percentage: number }

export interface ExperimentInput {
  fields: ExperimentFields
  featureFlagKey?: string
  /** parameters.feature_flag_variants, when given */
  variants?: VariantInput[]
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** `value` against `schema`, or 400 naming the first failing member (a/b/0 → a__b__0). */
export function checked<T extends TSchema>(schema: T, value: unknown, attr: string): Static<T> {
  if (Value.Check(schema, value)) return value as Static<T>
  const first = Value.Errors(schema, value).First()
  const path = first?.path ? `${attr}${first.path.split('/').join('__')}` : attr
  throw errors.validation('invalid_input', `${first?.message ?? 'Invalid value'}${first?.path ? ` (at ${attr}${first.path})` : ''}.`, path)
}

function text(value: unknown, attr: string, max: number, allowBlank: boolean): string {
  if (typeof value !== 'string') throw errors.validation('invalid_input', 'Not a valid string.', attr)
  const v = value.trim()
  if (!allowBlank && v === '') throw errors.validation('blank', 'This field may not be blank.', attr)
  if (v.length > max) throw errors.validation('max_length', `Ensure this field has no more than ${max} characters.`, attr)
  assertStorable(v, attr)
  return v
}

function date(value: unknown, attr: string): Date | null {
  if (value === null) return null
  if (typeof value !== 'string' || value.length > 64 || !/^\d{4}-\d\d-\d\d/.test(value) || Number.isNaN(Date.parse(value))) {
    throw errors.validation('invalid', 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].', attr)
  }
  return new Date(Date.parse(value))
}

function bool(value: unknown, attr: string): boolean {
  if (typeof value !== 'boolean') throw errors.validation('invalid', 'Must be a valid boolean.', attr)
  return value
}

/** Variants as an experiment needs them: ≥ 2, ≤ 20, distinct keys, `control` first, percentages summing to 100. */
export function checkVariants(variants: readonly VariantInput[], attr = 'parameters__feature_flag_variants'): void {
  if (variants.length < 2) throw errors.validation('invalid_input', 'An experiment needs at least two variants.', attr)
  if (variants[0]!.key !== 'control') throw errors.validation('invalid_input', 'The first variant must be "control".', attr)
  if (new Set(variants.map((v) => v.key)).size !== variants.length) throw errors.validation('invalid_input', 'Variant keys must be unique.', attr)
  if (variants.reduce((s, v) => s + v.rollout_percentage, 0) !== 100) throw errors.validation('invalid_input', 'Variant rollout percentages must sum to 100.', attr)
}

export function validateExperimentBody(body: unknown, method: 'POST' | 'PATCH'): ExperimentInput {
  if (!isObject(body)) throw errors.validation('parse_error', 'The body must be a JSON object.')
  const fields: ExperimentFields = {}
  const input: ExperimentInput = { fields }
  const has = (k: string) => Object.hasOwn(body, k) && body[k] !== undefined
  if (method === 'POST' && !has('name')) throw errors.validation('required', 'This field is required.', 'name')
  if (method === 'POST' && !has('feature_flag_key')) throw errors.validation('required', 'This field is required.', 'feature_flag_key')
  if (has('name')) fields.name = text(body.name, 'name', 400, false)
  if (has('description')) fields.description = body.description === null ? '' : text(body.description, 'description', 3000, true)
  if (has('feature_flag_key')) input.featureFlagKey = text(body.feature_flag_key, 'feature_flag_key', 400, false)
  if (has('parameters')) {
    const parameters = checked(Parameters, body.parameters, 'parameters')
    assertStorable(parameters, 'parameters')
    if (JSON.stringify(parameters).length > 16_384) throw errors.validation('max_length', 'parameters may take at most 16 KB.', 'parameters')
    if (parameters.feature_flag_variants) {
      input.variants = parameters.feature_flag_variants.map((v) => ({ key: v.key, ...(v.name != null ? { name: v.name } : {}), rollout_percentage: v.rollout_percentage }))
      checkVariants(input.variants)
    }
    fields.parameters = parameters
  }
  for (const key of ['metrics', 'metrics_secondary'] as const) {
    if (!has(key)) continue
    const list = body[key]
    if (!Array.isArray(list)) throw errors.validation('not_a_list', 'Expected a list of items.', key)
    if (list.length > MAX_METRICS) throw errors.validation('max_length', `At most ${MAX_METRICS} metrics.`, key)
    fields[key] = list.map((m, i) => checkMetric(m, `${key}__${i}`))
  }
  if (has('exposure_criteria')) fields.exposure_criteria = body.exposure_criteria === null ? {} : checked(ExposureCriteria, body.exposure_criteria, 'exposure_criteria')
  if (has('stats_config')) fields.stats_config = body.stats_config === null ? {} : checked(StatsConfig, body.stats_config, 'stats_config')
  if (has('start_date')) fields.start_date = date(body.start_date, 'start_date')
  if (has('end_date')) fields.end_date = date(body.end_date, 'end_date')
  if (has('archived')) fields.archived = bool(body.archived, 'archived')
  if (has('deleted')) fields.deleted = bool(body.deleted, 'deleted')
  if (has('conclusion')) fields.conclusion = body.conclusion === null ? null : checked(Conclusion, body.conclusion, 'conclusion')
  if (has('conclusion_comment')) fields.conclusion_comment = body.conclusion_comment === null ? null : text(body.conclusion_comment, 'conclusion_comment', 3000, true)
  return input
}

/** A metric: its schema, then what the schema cannot say (a mean needs `source`, a funnel `series`; sum needs a property). */
export function checkMetric(value: unknown, attr: string): Metric {
  // each node against its own kind's schema first, so that a refusal names the member (the union's would not)
  const node = (v: unknown, at: string) => {
    if (v !== undefined) checked((v as { kind?: unknown } | null)?.kind === 'ActionsNode' ? ActionsNode : EventsNode, v, at)
  }
  if (value !== null && typeof value === 'object') {
    const { source, series } = value as { source?: unknown; series?: unknown }
    node(source, `${attr}__source`)
    if (Array.isArray(series)) series.forEach((step, i) => node(step, `${attr}__series__${i}`))
  }
  const metric = checked(ExperimentMetric, value, attr)
  assertStorable(metric, attr)
  if (metric.metric_type === 'mean') {
    if (!metric.source) throw errors.validation('required', 'A mean metric needs `source` (an EventsNode or ActionsNode).', `${attr}__source`)
    if (metric.source.math === 'sum' && !metric.source.math_property) throw errors.validation('required', 'math "sum" needs math_property.', `${attr}__source__math_property`)
    // not every store can address a property whose name holds these: the same 400 everywhere instead of a failure on one
    if (metric.source.math_property !== undefined && /["\\\0-\x1f]/.test(metric.source.math_property)) {
      throw errors.validation('invalid_input', 'math_property may not hold a double quote, a backslash or a control character.', `${attr}__source__math_property`)
    }
  } else if (!metric.series || metric.series.length === 0) {
    throw errors.validation('required', 'A funnel metric needs `series` (its steps).', `${attr}__series`)
  }
  return metric
}
