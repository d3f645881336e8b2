// A project's session replay settings, named and shaped as PostHog's team fields (so a PATCH written for PostHog
// works here), plus phog's own retention of recordings in days. Each member is checked on its own and a refusal
// names it in `attr`; the JSON members are bounded in entries and characters before they are stored, because the
// remote config, /flags and /decide send them to every page that loads posthog-js.
import type { Sql } from 'postgres'
import { asJson } from '../db/postgres'
import { errors } from '../http/errors'

export interface LinkedFlag {
  id: number
  key: string
  variant?: string | null
}

export interface UrlTrigger {
  url: string
  matching: 'regex'
}

export interface RecordingSettings {
  session_recording_opt_in: boolean
  /** a decimal string "0.00".."1.00" (PostHog's DecimalField), null: every session */
  session_recording_sample_rate: string | null
  session_recording_minimum_duration_milliseconds: number | null
  session_recording_linked_flag: LinkedFlag | null
  session_recording_network_payload_capture_config: { recordHeaders?: boolean; recordBody?: boolean } | null
  session_recording_masking_config: { maskAllInputs?: boolean; maskTextSelector?: string; blockSelector?: string } | null
  session_recording_url_trigger_config: UrlTrigger[] | null
  session_recording_url_blocklist_config: UrlTrigger[] | null
  session_recording_event_trigger_config: string[] | null
  session_recording_trigger_match_type_config: 'any' | 'all' | null
  capture_console_log_opt_in: boolean | null
  capture_performance_opt_in: boolean | null
  /** phog's own: recordings older than this many days are removed */
  session_recording_retention_days: number
  /** PostHog's team field (error tracking): the remote config turns posthog-js's exception autocapture on */
  autocapture_exceptions_opt_in: boolean | null
}

/** What a project that never changed them has (PostHog's defaults; recording off). */
export const DEFAULT_RECORDING_SETTINGS: Readonly<RecordingSettings> = Object.freeze({
  session_recording_opt_in: false,
  session_recording_sample_rate: null,
  session_recording_minimum_duration_milliseconds: null,
  session_recording_linked_flag: null,
  session_recording_network_payload_capture_config: null,
  session_recording_masking_config: null,
  session_recording_url_trigger_config: [],
  session_recording_url_blocklist_config: [],
  session_recording_event_trigger_config: [],
  session_recording_trigger_match_type_config: null,
  capture_console_log_opt_in: true,
  capture_performance_opt_in: true,
  session_recording_retention_days: 30,
  autocapture_exceptions_opt_in: null,
})

export const RECORDING_FIELDS = Object.keys(DEFAULT_RECORDING_SETTINGS) as (keyof RecordingSettings)[]
const FIELD_SET = new Set<string>(RECORDING_FIELDS)

export const MAX_TRIGGERS = 100
export const MAX_PATTERN_LENGTH = 1000
export const MAX_NAME_LENGTH = 400
export const MAX_SELECTOR_LENGTH = 1000
export const MAX_RETENTION_DAYS = 3650

export function isRecordingField(name: string): name is keyof RecordingSettings {
  return FIELD_SET.has(name)
}

const invalid = (attr: string, detail: string) => errors.validation('invalid_input', detail, attr)
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function boolOf(attr: string, value: unknown, nullable: boolean): boolean | null {
  if (typeof value === 'boolean') return value
  if (value === null && nullable) return null
  throw invalid(attr, 'Must be a valid boolean.')
}

/** DRF's DecimalField(max_digits=3, decimal_places=2) between 0 and 1: a number or a decimal string; kept as "0.50". */
function sampleRateOf(value: unknown): string | null {
  const attr = 'session_recording_sample_rate'
  if (value === null) return null
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : null
  if (text === null || text.length > 16 || !/^\d+(\.\d+)?$/.test(text)) throw invalid(attr, 'A valid number is required.')
  const [, decimals = ''] = text.split('.')
  if (decimals.replace(/0+$/, '').length > 2) throw invalid(attr, 'Ensure that there are no more than 2 decimal places.')
  const rate = Number(text)
  if (!(rate >= 0 && rate <= 1)) throw invalid(attr, 'Ensure this value is between 0 and 1.')
  return rate.toFixed(2)
}

function minimumDurationOf(value: unknown): number | null {
  const attr = 'session_recording_minimum_duration_milliseconds'
  if (value === null) return null
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(attr, 'A valid integer is required.')
  if (value < 0 || value > 30000) throw invalid(attr, 'Ensure this value is between 0 and 30000.')
  return value
}

function boundedString(attr: string, value: unknown, max: number, what: string): string {
  if (typeof value !== 'string') throw invalid(attr, `${what} must be a string.`)
  if (value.length > max) throw invalid(attr, `${what} must have at most ${max} characters.`)
  return value
}

/** PostHog's rule: {id, key} or {id, key, variant}; a numeric string id is normalised to a number. */
function linkedFlagOf(value: unknown): LinkedFlag | null {
  const attr = 'session_recording_linked_flag'
  if (value === null) return null
  if (!isObject(value)) throw invalid(attr, 'Must provide a dictionary or None.')
  const keys = Object.keys(value).sort().join(',')
  if (keys !== 'id,key' && keys !== 'id,key,variant') {
    throw invalid(attr, "Must provide a dictionary with only 'id' and 'key' keys. _or_ only 'id', 'key', and 'variant' keys.")
  }
  const rawId = value.id
  const id = typeof rawId === 'number' ? rawId : typeof rawId === 'string' && /^\s*\d{1,15}\s*$/.test(rawId) ? Number(rawId) : NaN
  if (!Number.isSafeInteger(id) || id < 0) throw invalid(attr, "Must provide an integer 'id'.")
  const flag: LinkedFlag = { id, key: boundedString(attr, value.key, MAX_NAME_LENGTH, "The flag's 'key'") }
  if ('variant' in value) flag.variant = value.variant === null ? null : boundedString(attr, value.variant, MAX_NAME_LENGTH, "The flag's 'variant'")
  return flag
}

function networkCaptureOf(value: unknown): RecordingSettings['session_recording_network_payload_capture_config'] {
  const attr = 'session_recording_network_payload_capture_config'
  if (value === null) return null
  if (!isObject(value)) throw invalid(attr, 'Must provide a dictionary or None.')
  const out: { recordHeaders?: boolean; recordBody?: boolean } = {}
  for (const key of Object.keys(value)) {
    if (key !== 'recordHeaders' && key !== 'recordBody') {
      throw invalid(attr, "Must provide a dictionary with only 'recordHeaders' and/or 'recordBody' keys.")
    }
    if (typeof value[key] !== 'boolean') throw invalid(attr, `${key} must be a boolean.`)
    out[key] = value[key] as boolean
  }
  return out
}

function maskingOf(value: unknown): RecordingSettings['session_recording_masking_config'] {
  const attr = 'session_recording_masking_config'
  if (value === null) return null
  if (!isObject(value)) throw invalid(attr, 'Must provide a dictionary or None.')
  const out: NonNullable<RecordingSettings['session_recording_masking_config']> = {}
  for (const key of Object.keys(value)) {
    if (key === 'maskAllInputs') {
      if (typeof value.maskAllInputs !== 'boolean') throw invalid(attr, 'maskAllInputs must be a boolean.')
      out.maskAllInputs = value.maskAllInputs
    } else if (key === 'maskTextSelector' || key === 'blockSelector') {
      out[key] = boundedString(attr, value[key], MAX_SELECTOR_LENGTH, key)
    } else {
      throw invalid(attr, 'Must provide a dictionary with only known keys: maskAllInputs, maskTextSelector, blockSelector.')
    }
  }
  return out
}

/** URL triggers and the blocklist: [{url: <regex>, matching: "regex"}], the patterns as posthog-js compiles them. */
function urlTriggersOf(attr: string, value: unknown): UrlTrigger[] | null {
  if (value === null) return null
  if (!Array.isArray(value)) throw invalid(attr, 'Expected a list of items.')
  if (value.length > MAX_TRIGGERS) throw invalid(attr, `Ensure this field has no more than ${MAX_TRIGGERS} elements.`)
  return value.map((item, i) => {
    if (!isObject(item) || Object.keys(item).some((k) => k !== 'url' && k !== 'matching')) {
      throw invalid(attr, `Item ${i}: must be an object with 'url' and 'matching'.`)
    }
    const url = boundedString(attr, item.url, MAX_PATTERN_LENGTH, `Item ${i}: 'url'`)
    if (item.matching !== 'regex') throw invalid(attr, `Item ${i}: 'matching' must be "regex".`)
    try {
      // posthog-js builds a RegExp from it in the browser: a pattern it cannot compile is refused here
      new RegExp(url)
    } catch {
      throw invalid(attr, `Item ${i}: '${url.slice(0, 64)}' is not a valid regular expression.`)
    }
    return { url, matching: 'regex' as const }
  })
}

function eventTriggersOf(value: unknown): string[] | null {
  const attr = 'session_recording_event_trigger_config'
  if (value === null) return null
  if (!Array.isArray(value)) throw invalid(attr, 'Expected a list of items.')
  if (value.length > MAX_TRIGGERS) throw invalid(attr, `Ensure this field has no more than ${MAX_TRIGGERS} elements.`)
  return value.map((name, i) => boundedString(attr, name, MAX_NAME_LENGTH, `Item ${i}`))
}

function matchTypeOf(value: unknown): 'any' | 'all' | null {
  if (value === null || value === 'any' || value === 'all') return value
  throw invalid('session_recording_trigger_match_type_config', "Must provide a valid trigger match type. Only 'all' or 'any' or None are allowed.")
}

function retentionDaysOf(value: unknown): number {
  const attr = 'session_recording_retention_days'
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(attr, 'A valid integer is required.')
  if (value < 1 || value > MAX_RETENTION_DAYS) throw invalid(attr, `Ensure this value is between 1 and ${MAX_RETENTION_DAYS}.`)
  return value
}

/** The recording members of a PATCH body, checked; members not given are absent from the result. */
export function parseRecordingSettings(input: Record<string, unknown>): Partial<RecordingSettings> {
  const out: Partial<RecordingSettings> = {}
  const has = (name: keyof RecordingSettings) => Object.hasOwn(input, name)
  if (has('session_recording_opt_in')) out.session_recording_opt_in = boolOf('session_recording_opt_in', input.session_recording_opt_in, false)!
  if (has('session_recording_sample_rate')) out.session_recording_sample_rate = sampleRateOf(input.session_recording_sample_rate)
  if (has('session_recording_minimum_duration_milliseconds')) {
    out.session_recording_minimum_duration_milliseconds = minimumDurationOf(input.session_recording_minimum_duration_milliseconds)
  }
  if (has('session_recording_linked_flag')) out.session_recording_linked_flag = linkedFlagOf(input.session_recording_linked_flag)
  if (has('session_recording_network_payload_capture_config')) {
    out.session_recording_network_payload_capture_config = networkCaptureOf(input.session_recording_network_payload_capture_config)
  }
  if (has('session_recording_masking_config')) out.session_recording_masking_config = maskingOf(input.session_recording_masking_config)
  for (const name of ['session_recording_url_trigger_config', 'session_recording_url_blocklist_config'] as const) {
    if (has(name)) out[name] = urlTriggersOf(name, input[name])
  }
  if (has('session_recording_event_trigger_config')) out.session_recording_event_trigger_config = eventTriggersOf(input.session_recording_event_trigger_config)
  if (has('session_recording_trigger_match_type_config')) {
    out.session_recording_trigger_match_type_config = matchTypeOf(input.session_recording_trigger_match_type_config)
  }
  if (has('capture_console_log_opt_in')) out.capture_console_log_opt_in = boolOf('capture_console_log_opt_in', input.capture_console_log_opt_in, true)
  if (has('capture_performance_opt_in')) out.capture_performance_opt_in = boolOf('capture_performance_opt_in', input.capture_performance_opt_in, true)
  if (has('session_recording_retention_days')) out.session_recording_retention_days = retentionDaysOf(input.session_recording_retention_days)
  if (has('autocapture_exceptions_opt_in')) out.autocapture_exceptions_opt_in = boolOf('autocapture_exceptions_opt_in', input.autocapture_exceptions_opt_in, true)
  return out
}

/** The settings as one JSON object of the project row `p` (the project's answer and the flag cache read it). */
export const recordingSettingsColumn = (sql: Sql) => sql`
  json_build_object(
    'session_recording_opt_in', p.session_recording_opt_in,
    'session_recording_sample_rate', p.session_recording_sample_rate::text,
    'session_recording_minimum_duration_milliseconds', p.session_recording_minimum_duration_milliseconds,
    'session_recording_linked_flag', p.session_recording_linked_flag,
    'session_recording_network_payload_capture_config', p.session_recording_network_payload_capture_config,
    'session_recording_masking_config', p.session_recording_masking_config,
    'session_recording_url_trigger_config', p.session_recording_url_trigger_config,
    'session_recording_url_blocklist_config', p.session_recording_url_blocklist_config,
    'session_recording_event_trigger_config', p.session_recording_event_trigger_config,
    'session_recording_trigger_match_type_config', p.session_recording_trigger_match_type_config,
    'capture_console_log_opt_in', p.capture_console_log_opt_in,
    'capture_performance_opt_in', p.capture_performance_opt_in,
    'session_recording_retention_days', p.session_recording_retention_days,
    'autocapture_exceptions_opt_in', p.autocapture_exceptions_opt_in
  )`

/** Store the members given (checked by parseRecordingSettings); the others keep their values. */
export async function updateRecordingSettings(sql: Sql, projectId: number, changes: Partial<RecordingSettings>): Promise<void> {
  const json = (v: unknown) => (v === null || v === undefined ? null : sql.json(asJson(v)))
  const given = (name: keyof RecordingSettings) => Object.hasOwn(changes, name)
  // each member: `given ? new value : current value`, so that setting a member to null is told from leaving it
  await sql`
    update projects p set
      session_recording_opt_in = case when ${given('session_recording_opt_in')} then ${changes.session_recording_opt_in ?? false}::boolean else p.session_recording_opt_in end,
      session_recording_sample_rate = case when ${given('session_recording_sample_rate')} then ${changes.session_recording_sample_rate ?? null}::numeric(3, 2) else p.session_recording_sample_rate end,
      session_recording_minimum_duration_milliseconds = case when ${given('session_recording_minimum_duration_milliseconds')} then ${changes.session_recording_minimum_duration_milliseconds ?? null}::integer else p.session_recording_minimum_duration_milliseconds end,
      session_recording_linked_flag = case when ${given('session_recording_linked_flag')} then ${json(changes.session_recording_linked_flag)}::jsonb else p.session_recording_linked_flag end,
      session_recording_network_payload_capture_config = case when ${given('session_recording_network_payload_capture_config')} then ${json(changes.session_recording_network_payload_capture_config)}::jsonb else p.session_recording_network_payload_capture_config end,
      session_recording_masking_config = case when ${given('session_recording_masking_config')} then ${json(changes.session_recording_masking_config)}::jsonb else p.session_recording_masking_config end,
      session_recording_url_trigger_config = case when ${given('session_recording_url_trigger_config')} then ${json(changes.session_recording_url_trigger_config)}::jsonb else p.session_recording_url_trigger_config end,
      session_recording_url_blocklist_config = case when ${given('session_recording_url_blocklist_config')} then ${json(changes.session_recording_url_blocklist_config)}::jsonb else p.session_recording_url_blocklist_config end,
      session_recording_event_trigger_config = case when ${given('session_recording_event_trigger_config')} then ${json(changes.session_recording_event_trigger_config)}::jsonb else p.session_recording_event_trigger_config end,
      session_recording_trigger_match_type_config = case when ${given('session_recording_trigger_match_type_config')} then ${changes.session_recording_trigger_match_type_config ?? null}::text else p.session_recording_trigger_match_type_config end,
      capture_console_log_opt_in = case when ${given('capture_console_log_opt_in')} then ${changes.capture_console_log_opt_in ?? null}::boolean else p.capture_console_log_opt_in end,
      capture_performance_opt_in = case when ${given('capture_performance_opt_in')} then ${changes.capture_performance_opt_in ?? null}::boolean else p.capture_performance_opt_in end,
      session_recording_retention_days = case when ${given('session_recording_retention_days')} then ${changes.session_recording_retention_days ?? 30}::integer else p.session_recording_retention_days end,
      autocapture_exceptions_opt_in = case when ${given('autocapture_exceptions_opt_in')} then ${changes.autocapture_exceptions_opt_in ?? null}::boolean else p.autocapture_exceptions_opt_in end
    where p.id = ${projectId}`
}

/** A stored settings object read back (json_build_object), with the defaults for anything missing. */
export function recordingSettingsOf(stored: Partial<RecordingSettings> | null | undefined): RecordingSettings {
  return { ...DEFAULT_RECORDING_SETTINGS, ...(stored ?? {}) }
}
