// The members of the client config that follow the project's session replay settings, built as PostHog's remote
// config builds them (`sessionRecording`, `capturePerformance`) so that posthog-js, old and new, reads them alike.
// Made once per settings object (when the project's flags and settings are loaded), never per request.
import type { RecordingSettings } from '../projects/recording-settings'

/** Where posthog-js sends recordings, relative to its api_host. */
export const RECORDING_ENDPOINT = '/s/'

export type SessionRecordingAnswer =
  | false
  | {
      endpoint: string
      consoleLogRecordingEnabled: boolean
      recorderVersion: 'v2'
      sampleRate: string | null
      minimumDurationMilliseconds: number | null
      linkedFlag: string | { flag: string; variant: string } | null
      networkPayloadCapture: { recordHeaders?: boolean; recordBody?: boolean } | null
      masking: { maskAllInputs?: boolean; maskTextSelector?: string; blockSelector?: string } | null
      urlTriggers: unknown[] | null
      urlBlocklist: unknown[] | null
      eventTriggers: string[] | null
      triggerMatchType: 'any' | 'all' | null
      scriptConfig: { script: string } | null
    }

const emptyObject = (v: object | null) => (v === null || Object.keys(v).length === 0 ? null : v)

/** PostHog's `sessionRecording`: false unless opted in; "1.00" and 0 ms are sent as null, as PostHog sends them. */
export function sessionRecordingAnswer(s: RecordingSettings): SessionRecordingAnswer {
  if (!s.session_recording_opt_in) return false
  const flag = s.session_recording_linked_flag
  const sampleRate = s.session_recording_sample_rate === null || s.session_recording_sample_rate === '1.00' ? null : s.session_recording_sample_rate
  return {
    endpoint: RECORDING_ENDPOINT,
    consoleLogRecordingEnabled: s.capture_console_log_opt_in === true,
    recorderVersion: 'v2',
    sampleRate,
    minimumDurationMilliseconds: s.session_recording_minimum_duration_milliseconds || null,
    linkedFlag: flag === null ? null : typeof flag.variant === 'string' ? { flag: flag.key, variant: flag.variant } : flag.key,
    networkPayloadCapture: emptyObject(s.session_recording_network_payload_capture_config),
    masking: emptyObject(s.session_recording_masking_config),
    urlTriggers: s.session_recording_url_trigger_config,
    urlBlocklist: s.session_recording_url_blocklist_config,
    eventTriggers: s.session_recording_event_trigger_config,
    triggerMatchType: s.session_recording_trigger_match_type_config,
    // null: posthog-js loads its own recorder script (lazy-recorder.js, or recorder.js before 1.2xx) from /static/
    scriptConfig: null,
  }
}

/** PostHog's `capturePerformance`: network timing in recordings when opted in (web vitals are not offered). */
export function capturePerformanceAnswer(s: RecordingSettings) {
  if (!s.capture_performance_opt_in) return false
  return { network_timing: true, web_vitals: false, web_vitals_allowed_metrics: null }
}
