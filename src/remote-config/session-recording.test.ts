// The sessionRecording and capturePerformance members as PostHog's remote config builds them from a project's
// settings, and the capabilities text /decide reuses while the settings do not change.
import { describe, expect, test } from 'bun:test'
import { DEFAULT_RECORDING_SETTINGS, parseRecordingSettings, recordingSettingsOf, type RecordingSettings } from '../projects/recording-settings'
import { decideResponse } from '../flags/decide/response'
import { responseFormat } from '../flags/decide/request'
import { clientCapabilities, DEFAULT_CAPABILITIES } from './capabilities'
import { capturePerformanceAnswer, sessionRecordingAnswer } from './session-recording'

const on = (changes: Partial<RecordingSettings> = {}): RecordingSettings => ({ ...DEFAULT_RECORDING_SETTINGS, session_recording_opt_in: true, ...changes })

describe('sessionRecording', () => {
  test('false unless opted in, whatever else is set', () => {
    expect(sessionRecordingAnswer(DEFAULT_RECORDING_SETTINGS)).toBe(false)
    expect(sessionRecordingAnswer({ ...on({ session_recording_sample_rate: '0.10' }), session_recording_opt_in: false })).toBe(false)
    expect(DEFAULT_CAPABILITIES.sessionRecording).toBe(false)
  })

  test('opted in with the defaults: PostHog’s object, members in its order', () => {
    const answer = sessionRecordingAnswer(on())
    expect(answer).toEqual({
      endpoint: '/s/',
      consoleLogRecordingEnabled: true,
      recorderVersion: 'v2',
      sampleRate: null,
      minimumDurationMilliseconds: null,
      linkedFlag: null,
      networkPayloadCapture: null,
      masking: null,
      urlTriggers: [],
      urlBlocklist: [],
      eventTriggers: [],
      triggerMatchType: null,
      scriptConfig: null,
    })
    expect(Object.keys(answer as object)).toEqual([
      'endpoint', 'consoleLogRecordingEnabled', 'recorderVersion', 'sampleRate', 'minimumDurationMilliseconds', 'linkedFlag',
      'networkPayloadCapture', 'masking', 'urlTriggers', 'urlBlocklist', 'eventTriggers', 'triggerMatchType', 'scriptConfig',
    ])
  })

  test('"1.00" and 0 ms are sent as null; other rates as their two-decimal string', () => {
    expect(sessionRecordingAnswer(on({ session_recording_sample_rate: '1.00' }))).toMatchObject({ sampleRate: null })
    expect(sessionRecordingAnswer(on({ session_recording_sample_rate: '0.00' }))).toMatchObject({ sampleRate: '0.00' })
    expect(sessionRecordingAnswer(on({ session_recording_minimum_duration_milliseconds: 0 }))).toMatchObject({ minimumDurationMilliseconds: null })
    expect(sessionRecordingAnswer(on({ session_recording_minimum_duration_milliseconds: 1500 }))).toMatchObject({ minimumDurationMilliseconds: 1500 })
  })

  test('the linked flag: its key alone, or {flag, variant} when a variant is named', () => {
    expect(sessionRecordingAnswer(on({ session_recording_linked_flag: { id: 1, key: 'rec' } }))).toMatchObject({ linkedFlag: 'rec' })
    expect(sessionRecordingAnswer(on({ session_recording_linked_flag: { id: 1, key: 'rec', variant: null } }))).toMatchObject({ linkedFlag: 'rec' })
    expect(sessionRecordingAnswer(on({ session_recording_linked_flag: { id: 1, key: 'rec', variant: 'b' } }))).toMatchObject({ linkedFlag: { flag: 'rec', variant: 'b' } })
  })

  test('empty network and masking configs are null; console logs follow their switch', () => {
    expect(sessionRecordingAnswer(on({ session_recording_network_payload_capture_config: {}, session_recording_masking_config: {} }))).toMatchObject({
      networkPayloadCapture: null,
      masking: null,
    })
    expect(sessionRecordingAnswer(on({ capture_console_log_opt_in: null }))).toMatchObject({ consoleLogRecordingEnabled: false })
  })

  test('capturePerformance: network timing when opted in, else false', () => {
    expect(capturePerformanceAnswer(DEFAULT_RECORDING_SETTINGS)).toEqual({ network_timing: true, web_vitals: false, web_vitals_allowed_metrics: null })
    expect(capturePerformanceAnswer({ ...DEFAULT_RECORDING_SETTINGS, capture_performance_opt_in: false })).toBe(false)
  })
})

describe('parsing a PATCH', () => {
  test('sample rates: numbers and strings to two decimals; more precision refused', () => {
    expect(parseRecordingSettings({ session_recording_sample_rate: 0.5 })).toEqual({ session_recording_sample_rate: '0.50' })
    expect(parseRecordingSettings({ session_recording_sample_rate: '1' })).toEqual({ session_recording_sample_rate: '1.00' })
    expect(parseRecordingSettings({ session_recording_sample_rate: 0.25 })).toEqual({ session_recording_sample_rate: '0.25' })
    expect(() => parseRecordingSettings({ session_recording_sample_rate: 0.125 })).toThrow('2 decimal places')
    expect(() => parseRecordingSettings({ session_recording_sample_rate: 1e-7 })).toThrow()
  })

  test('members not given are absent; hostile sizes refused before they are kept', () => {
    expect(parseRecordingSettings({ timezone: 'UTC' })).toEqual({})
    expect(() => parseRecordingSettings({ session_recording_event_trigger_config: Array(101).fill('e') })).toThrow('no more than 100')
    expect(() => parseRecordingSettings({ session_recording_url_trigger_config: [{ url: 'a'.repeat(1001), matching: 'regex' }] })).toThrow('at most 1000')
  })

  test('the settings read back fill in the defaults', () => {
    expect(recordingSettingsOf(null)).toEqual(DEFAULT_RECORDING_SETTINGS)
    expect(recordingSettingsOf({ session_recording_opt_in: true }).session_recording_retention_days).toBe(30)
  })
})

describe('/decide text', () => {
  test('the configuration members come from the project’s capabilities', () => {
    const format = responseFormat('decide', new URLSearchParams('v=3'))
    const capabilities = Object.freeze(clientCapabilities({ recording: on({ session_recording_sample_rate: '0.20' }), surveys: false, autocaptureExceptions: false }))
    const answer = JSON.parse(decideResponse(format, 'disabled', 'r', 0, capabilities))
    expect(answer.sessionRecording).toMatchObject({ endpoint: '/s/', sampleRate: '0.20' })
    expect(answer.supportedCompression).toEqual(['gzip', 'gzip-js', 'lz64'])
    expect(answer).toMatchObject({ surveys: false, autocaptureExceptions: false, errorTracking: { autocaptureExceptions: false } })
    const defaults = JSON.parse(decideResponse(format, 'disabled', 'r', 0))
    expect(defaults).toMatchObject({ sessionRecording: false, surveys: false, autocaptureExceptions: false })
  })

  test('surveys and exception autocapture follow the project, recording aside', () => {
    const format = responseFormat('decide', new URLSearchParams('v=3'))
    const capabilities = Object.freeze(clientCapabilities({ recording: DEFAULT_RECORDING_SETTINGS, surveys: true, autocaptureExceptions: true }))
    const answer = JSON.parse(decideResponse(format, 'disabled', 'r', 0, capabilities))
    expect(answer).toMatchObject({ sessionRecording: false, surveys: true, autocaptureExceptions: true, errorTracking: { autocaptureExceptions: true, suppressionRules: [] } })
  })
})
