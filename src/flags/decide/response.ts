// /decide and /flags answers by version (PostHog's decide.py `_format_feature_flags_response` and
// `get_base_config`; the Rust service's FlagsResponse / LegacyFlagsResponse for /flags).
//
// The answer is written as JSON text directly: the configuration is serialised once, and each flag's key,
// variants and payloads once per cached flag, so a request only concatenates (this is /decide's hot path).
import type { CompiledFlag, FlagResult, MatchReason } from '../engine'
import { pyTruthy } from '../engine/operators'
import type { ResponseFormat } from './request'

import { DEFAULT_CAPABILITIES, SUPPORTED_COMPRESSION, type ClientCapabilities } from '../../remote-config/capabilities'

/** What GET /decide answers (no evaluation, no authentication). */
export function minimalDecide() {
  return {
    config: { enable_collect_everything: true },
    editorParams: {},
    toolbarParams: {},
    isAuthenticated: false,
    supportedCompression: SUPPORTED_COMPRESSION,
    sessionRecording: false,
    featureFlags: {},
  }
}

/** The client configuration merged into every evaluated answer: what this service offers (replay as the project's settings say), the rest off. */
export function baseConfig(capabilities: ClientCapabilities = DEFAULT_CAPABILITIES): Record<string, unknown> {
  return {
    config: { enable_collect_everything: true },
    editorParams: {},
    toolbarParams: {},
    isAuthenticated: false,
    ...capabilities,
  }
}

/** `{"config":…,"siteApps":[]` per capabilities object (one per project's settings): written once, then reused. */
const configMembers = new WeakMap<ClientCapabilities, string>()

function configMembersOf(capabilities: ClientCapabilities): string {
  let text = configMembers.get(capabilities)
  if (text === undefined) {
    text = JSON.stringify(baseConfig(capabilities)).slice(0, -1)
    configMembers.set(capabilities, text)
  }
  return text
}

const DESCRIPTIONS: Record<MatchReason, string> = {
  condition_match: '',
  no_condition_match: 'No matching condition set',
  out_of_rollout_bound: 'Out of rollout bound',
  no_group_type: 'No group type',
  super_condition_value: 'Super condition value',
  holdout_condition_value: 'Holdout condition value',
}

export function reasonDescription(reason: MatchReason, conditionIndex: number | null): string {
  return reason === 'condition_match' ? `Matched condition set ${(conditionIndex ?? 0) + 1}` : DESCRIPTIONS[reason]
}

/** The evaluated flags of one request, in evaluation order; a flag that could not be computed is absent. */
export interface Evaluated {
  flags: CompiledFlag[]
  results: FlagResult[]
  /** some flag could not be computed (stored data unavailable, evaluation error) */
  errors: boolean
}

/** JSON text of one flag's constant parts, made once per compiled flag. */
interface FlagText {
  key: string
  /** `"id":…,"version":…` of v4 metadata */
  meta: string
  variants: Map<string, string>
  payloads: Map<unknown, string>
  /** `"key":{detail}` of v4, by outcome (a flag has only a few: its variants × reasons × conditions) */
  details: Map<string, string>
  /** `"key":value` members: true, false, and one per variant */
  whenTrue: string
  whenFalse: string
  variantMembers: Map<string, string>
  /** `"key":payload` members, by payload */
  payloadMembers: Map<unknown, string>
}

/** A rope flattened once, so that later concatenations copy one piece instead of many. */
function flat(s: string): string {
  return s.split('').join('')
}

function textOf(flag: CompiledFlag): FlagText {
  let t = flag.answerText as FlagText | undefined
  if (t === undefined) {
    const key = JSON.stringify(flag.key)
    t = {
      key,
      meta: `"id":${flag.id},"version":${flag.version || 1}`,
      variants: new Map(),
      payloads: new Map(),
      details: new Map(),
      whenTrue: `${key}:true`,
      whenFalse: `${key}:false`,
      variantMembers: new Map(),
      payloadMembers: new Map(),
    }
    flag.answerText = t
  }
  return t
}

function variantText(t: FlagText, variant: string): string {
  let s = t.variants.get(variant)
  if (s === undefined) {
    s = JSON.stringify(variant)
    if (t.variants.size < 64) t.variants.set(variant, s)
  }
  return s
}

/** A payload as JSON (payloads are the flag's own stored values: the same objects every request). */
function payloadText(t: FlagText, payload: unknown): string {
  let s = t.payloads.get(payload)
  if (s === undefined) {
    s = JSON.stringify(payload) ?? 'null'
    if (t.payloads.size < 64) t.payloads.set(payload, s)
  }
  return s
}

/** `"key":value` (false, true or the variant). */
function valueMember(t: FlagText, r: FlagResult): string {
  if (!r.enabled) return t.whenFalse
  if (r.variant === null) return t.whenTrue
  let s = t.variantMembers.get(r.variant)
  if (s === undefined) {
    s = flat(`${t.key}:${variantText(t, r.variant)}`)
    if (t.variantMembers.size < 64) t.variantMembers.set(r.variant, s)
  }
  return s
}

/** `"key":payload`. */
function payloadMember(t: FlagText, payload: unknown): string {
  let s = t.payloadMembers.get(payload)
  if (s === undefined) {
    s = flat(`${t.key}:${payloadText(t, payload)}`)
    if (t.payloadMembers.size < 64) t.payloadMembers.set(payload, s)
  }
  return s
}

/** One `"key":{…}` member of the v4 map; the same outcome of the same flag always reads the same. */
function detailMember(t: FlagText, r: FlagResult): string {
  // the payload follows from the outcome: payloads[variant or "true"] of a match, none otherwise
  const id = `${r.enabled ? 'T' : 'F'}${r.reason}:${r.conditionIndex}:${r.variant ?? ''}`
  let s = t.details.get(id)
  if (s === undefined) {
    // one flat string, so that the answer is a short concatenation
    s = flat(`${t.key}:${detailText(t, r)}`)
    if (t.details.size < 256) t.details.set(id, s)
  }
  return s
}

function detailText(t: FlagText, r: FlagResult): string {
  const variant = r.variant === null ? 'null' : variantText(t, r.variant)
  const index = r.conditionIndex === null ? 'null' : String(r.conditionIndex)
  const payload = r.payload === undefined || r.payload === null ? 'null' : payloadText(t, r.payload)
  return (
    `{"key":${t.key},"enabled":${r.enabled},"variant":${variant},"reason":{"code":"${r.reason}","condition_index":${index},` +
    `"description":"${reasonDescription(r.reason, r.conditionIndex)}"},"metadata":{${t.meta},"description":null,"payload":${payload}}}`
  )
}

/** The flag section for the requested version, as JSON members (without braces). */
export function flagSection(format: ResponseFormat, e: Evaluated): string {
  const { flags, results } = e
  const n = results.length
  const errors = `"errorsWhileComputingFlags":${e.errors},"errorComputingFlags":${e.errors}`
  // members are collected and joined: one flat string, cheaper to hand to the Response than a long rope
  const members: string[] = []
  switch (format.shape) {
    case 'decide-v1': {
      for (let i = 0; i < n; i++) if (results[i].enabled) members.push(textOf(flags[i]).key)
      return `"featureFlags":[${members.join(',')}]`
    }
    case 'decide-v2': {
      for (let i = 0; i < n; i++) if (results[i].enabled) members.push(valueMember(textOf(flags[i]), results[i]))
      return `"featureFlags":{${members.join(',')}}`
    }
    case 'decide-v3':
    case 'flags-legacy': {
      // /decide v3 sends truthy payloads only; the Rust /flags legacy shape every payload that is set
      const truthyOnly = format.shape === 'decide-v3'
      const payloads: string[] = []
      for (let i = 0; i < n; i++) {
        const r = results[i]
        const t = textOf(flags[i])
        members.push(valueMember(t, r))
        if (r.enabled && (truthyOnly ? pyTruthy(r.payload) : r.payload !== undefined && r.payload !== null)) {
          payloads.push(payloadMember(t, r.payload))
        }
      }
      const values = members.join(',')
      return truthyOnly
        ? `"featureFlags":{${values}},${errors},"featureFlagPayloads":{${payloads.join(',')}}`
        : `"featureFlags":{${values}},"featureFlagPayloads":{${payloads.join(',')}},${errors}`
    }
    case 'decide-v4':
    case 'flags-v2': {
      for (let i = 0; i < n; i++) members.push(detailMember(textOf(flags[i]), results[i]))
      return `"flags":{${members.join(',')}},${errors}`
    }
  }
}

const NOTHING: Evaluated = { flags: [], results: [], errors: false }

/**
 * The whole answer as JSON text: configuration (when asked for; the project's capabilities, recording off when they
 * are not known), the flag section, requestId (and evaluatedAt on /flags).
 */
export function decideResponse(
  format: ResponseFormat,
  evaluated: Evaluated | 'disabled',
  requestId: string,
  now = Date.now(),
  capabilities: ClientCapabilities = DEFAULT_CAPABILITIES,
): string {
  const section = flagSection(format, evaluated === 'disabled' ? NOTHING : evaluated)
  const evaluatedAt = format.shape === 'flags-v2' || format.shape === 'flags-legacy' ? `,"evaluatedAt":${now}` : ''
  return `${format.config ? `${configMembersOf(capabilities)},` : '{'}${section},"requestId":"${requestId}"${evaluatedAt}}`
}
