// What this service offers the client libraries, told to them by /decide, /flags and the remote config:
// where to send events and how they may compress them, whether to record sessions, to show surveys and to capture
// exceptions on their own (the project's settings); everything this service does not do is off.
import { DEFAULT_RECORDING_SETTINGS, type RecordingSettings } from '../projects/recording-settings'
import { capturePerformanceAnswer, sessionRecordingAnswer } from './session-recording'

/** posthog-js gzips only when it sees gzip-js, and falls back to plain JSON otherwise. */
export const SUPPORTED_COMPRESSION = ['gzip', 'gzip-js', 'lz64']

export type ClientCapabilities = Readonly<Record<string, unknown>>

/** What a project's client config follows, read with its flags. */
export interface ProjectClientSettings {
  recording: RecordingSettings
  /** whether the project has a survey posthog-js may show (it then fetches them from /api/surveys/) */
  surveys: boolean
  /** whether posthog-js captures uncaught errors and unhandled rejections on its own */
  autocaptureExceptions: boolean
}

export const DEFAULT_CLIENT_SETTINGS: ProjectClientSettings = Object.freeze({ recording: DEFAULT_RECORDING_SETTINGS, surveys: false, autocaptureExceptions: false })

/** The capabilities for a project's settings; made when the project is loaded, then shared by its answers. */
export function clientCapabilities(settings: ProjectClientSettings = DEFAULT_CLIENT_SETTINGS): ClientCapabilities {
  return {
    supportedCompression: SUPPORTED_COMPRESSION,
    sessionRecording: sessionRecordingAnswer(settings.recording),
    captureDeadClicks: false,
    capturePerformance: capturePerformanceAnswer(settings.recording),
    autocapture_opt_out: false,
    autocaptureExceptions: settings.autocaptureExceptions,
    analytics: { endpoint: '/i/v0/e/' },
    elementsChainAsString: true,
    errorTracking: { autocaptureExceptions: settings.autocaptureExceptions, suppressionRules: [] },
    heatmaps: false,
    surveys: settings.surveys,
    defaultIdentifiedOnly: true,
    siteApps: [],
  }
}

/** A project whose settings were never read (or could not be): recording, surveys and exception autocapture off. */
export const DEFAULT_CAPABILITIES: ClientCapabilities = Object.freeze(clientCapabilities())
