// Reading a /decide or /flags request (PostHog's decide.py and the Rust flags service's FlagRequest):
// the body however it was encoded, the version, the token, the distinct id and the property overrides.
import { decodePayload, MAX_JSON_DEPTH, parseJson, scanJson, tooManyValues, valuesBudget, type RawPayload } from '../../http/decode'
import { ApiError, errors } from '../../http/errors'
import { boundedValue } from '../engine/operators'
import { pyStr } from '../engine/python/pyvalue'

export type Shape = 'decide-v1' | 'decide-v2' | 'decide-v3' | 'decide-v4' | 'flags-v2' | 'flags-legacy'

export interface ResponseFormat {
  shape: Shape
  /** /flags: merge the client configuration (always on /decide) */
  config: boolean
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Python int(): an optional sign and digits (underscores between digits), surrounding whitespace allowed. */
function pyInt(text: string): number | null {
  const m = /^\s*([+-]?)(\d(?:_?\d)*)\s*$/.exec(text)
  if (!m) return null
  const n = Number(m[2].replace(/_/g, ''))
  return m[1] === '-' ? -n : n
}

/**
 * /decide: `v` as Django reads it (the last value); missing → 1, unparseable (posthog-js 1.19's `?v=2&v=1.19.0`) → 2.
 * /flags: v >= 2 gives the flags map, anything else the legacy shape; neither v nor config means v=2&config=true.
 */
export function responseFormat(endpoint: 'decide' | 'flags', query: URLSearchParams): ResponseFormat {
  const values = query.getAll('v')
  const raw = values.length > 0 ? values[values.length - 1] : null
  if (endpoint === 'decide') {
    const v = raw === null ? 1 : (pyInt(raw) ?? 2)
    return { shape: v >= 4 ? 'decide-v4' : v === 3 ? 'decide-v3' : v === 2 ? 'decide-v2' : 'decide-v1', config: true }
  }
  const configParam = query.get('config')
  if ((raw === null || raw === '') && configParam === null) return { shape: 'flags-v2', config: true }
  const v = raw === null ? null : pyInt(raw)
  return { shape: v !== null && v >= 2 ? 'flags-v2' : 'flags-legacy', config: truthyParam(configParam) }
}

/** Query booleans as the Rust service reads them (`true`, `1`, `yes`, `on`; bare `?config` counts as true). */
export function truthyParam(value: string | null): boolean {
  if (value === null) return false
  return ['', 'true', '1', 'yes', 'on', 't', 'y'].includes(value.trim().toLowerCase())
}

/** process_bool: booleans, and strings like "true"/"yes"/"1". */
export function processBool(value: unknown): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'number') return value !== 0
  if (typeof value === 'string') return ['y', 'yes', 't', 'true', 'on', '1'].includes(value.trim().toLowerCase())
  return false
}

/** The request body as an object; an empty body is `{}`. Decoding errors are decide's `malformed_data`. */
const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * A body nesting deeper than the limit (a distinct_id a million levels deep), or holding more values than its
 * size on the wire allows (a small gzip body inflating to millions), is refused before it is parsed.
 */
function parseBounded(text: string, wireBytes: number): unknown {
  const budget = valuesBudget(wireBytes)
  const scan = scanJson(text, MAX_JSON_DEPTH, budget)
  if (scan.deep) throw errors.validation('malformed_data', `Malformed request data: JSON nested deeper than ${MAX_JSON_DEPTH} levels.`)
  if (scan.tooManyValues) tooManyValues(budget)
  return parseJson(text)
}

export function readBody(raw: RawPayload, maxBytes: number): { data: Record<string, unknown>; form: URLSearchParams | null } {
  if (raw.body.length === 0 && !raw.query.get('data')) return { data: {}, form: null }
  try {
    // The common case (server SDKs): a plain JSON object, no compression.
    if (raw.body[0] === 0x7b && raw.contentEncoding === null && raw.body.length <= maxBytes && !raw.query.has('compression')) {
      let text: string | null = null
      try {
        text = utf8.decode(raw.body)
      } catch {
        // not UTF-8: decodePayload explains
      }
      if (text !== null) {
        const data = parseBounded(text, raw.body.length)
        if (!isObject(data)) throw errors.validation('malformed_data', 'Malformed request data: expected a JSON object.')
        return { data, form: null }
      }
    }
    const decoded = decodePayload(raw, maxBytes)
    const data = parseBounded(decoded.text, raw.body.length > 0 ? raw.body.length : (raw.query.get('data')?.length ?? 0))
    if (!isObject(data)) throw errors.validation('malformed_data', 'Malformed request data: expected a JSON object.')
    return { data, form: decoded.form }
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'invalid_payload' || error.code === 'no_data')) {
      throw errors.validation('malformed_data', error.detail.startsWith('Malformed request data') ? error.detail : `Malformed request data: ${error.detail}`)
    }
    throw error
  }
}

const nonEmpty = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null)

/** get_token: form api_key, form token, body $token, token, api_key; then the query string. */
export function findToken(data: Record<string, unknown>, form: URLSearchParams | null, query: URLSearchParams): string | null {
  return (
    nonEmpty(form?.get('api_key')) ??
    nonEmpty(form?.get('token')) ??
    nonEmpty(data.$token) ??
    nonEmpty(data.token) ??
    nonEmpty(data.api_key) ??
    nonEmpty(query.get('token')) ??
    nonEmpty(query.get('api_key'))
  )
}

export const DISTINCT_ID_MAX = 200

/** `distinct_id` (or `$distinct_id`) as Python's str() gives it, truncated to 200 characters; required. */
export function findDistinctId(data: Record<string, unknown>): string {
  const raw = data.distinct_id ?? data.$distinct_id
  if (raw === undefined || raw === null || raw === '') {
    throw errors.validation('missing_distinct_id', 'Decide requires a distinct_id.')
  }
  const text = pyStr(raw)
  return text.length > DISTINCT_ID_MAX ? text.slice(0, DISTINCT_ID_MAX) : text
}

export interface Overrides {
  groups: Record<string, string>
  personOverrides: Record<string, unknown>
  groupOverrides: Record<string, Record<string, unknown>>
}

/**
 * Request properties that win over stored ones: `{distinct_id, ...person_properties}`, and per group named in
 * `groups`, `{$group_key, ...group_properties[name]}`. (PostHog adds GeoIP properties between the two; this
 * service has no GeoIP database.)
 */
export function overridesOf(data: Record<string, unknown>, distinctId: string): Overrides {
  const groups = isObject(data.groups) ? (data.groups as Record<string, string>) : {}
  const personProperties = isObject(data.person_properties) ? data.person_properties : null
  const personOverrides: Record<string, unknown> = personProperties ? { distinct_id: distinctId, ...boundedValues(personProperties) } : { distinct_id: distinctId }
  const groupOverrides: Record<string, Record<string, unknown>> = {}
  const groupProperties = isObject(data.group_properties) ? data.group_properties : null
  for (const name of Object.keys(groups)) {
    const props = groupProperties && isObject(groupProperties[name]) ? (groupProperties[name] as Record<string, unknown>) : null
    groupOverrides[name] = props ? { $group_key: groups[name], ...boundedValues(props) } : { $group_key: groups[name] }
  }
  return { groups, personOverrides, groupOverrides }
}

/** Request properties with every list or dict over the engine's size limit replaced by its marker (no match). */
function boundedValues(properties: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | null = null
  for (const key in properties) {
    const value = properties[key]
    if (typeof value !== 'object' || value === null) continue
    const bounded = boundedValue(value)
    // defined, not assigned: a key named __proto__ stays a key
    if (bounded !== value) Object.defineProperty((out ??= { ...properties }), key, { value: bounded, writable: true, enumerable: true, configurable: true })
  }
  return out ?? properties
}

/** flag_keys_to_evaluate: the keys to evaluate, or null for all. */
export function flagKeysToEvaluate(data: Record<string, unknown>): Set<string> | null {
  const keys = data.flag_keys_to_evaluate
  if (!Array.isArray(keys)) return null
  return new Set(keys.filter((k): k is string => typeof k === 'string'))
}

/** $anon_distinct_id (or anon_distinct_id): the identifier experience-continuity flags keep hashing on. */
export function anonDistinctId(data: Record<string, unknown>): string | null {
  const raw = data.$anon_distinct_id ?? data.anon_distinct_id
  if (raw === undefined || raw === null || raw === '') return null
  return pyStr(raw).slice(0, DISTINCT_ID_MAX)
}
