// What this service offers the client libraries, told to them by /decide, /flags and the remote config:
// where to send events and how they may compress them, whether to record sessions (the project's settings);
// everything this service does not do is off.
import { DEFAULT_RECORDING_SETTINGS, type RecordingSettings } from '../projects/recording-settings'
import { capturePerformanceAnswer, sessionRecordingAnswer } from './session-recording'

/** posthog-js gzips only when it sees gzip-js, and falls back to plain JSON otherwise. */
export const SUPPORTED_COMPRESSION = ['gzip', 'gzip-js', 'lz64']

export type ClientCapabilities = Readonly<Record<string, unknown>>

/** The capabilities for a project's replay settings; made when the project is loaded, then shared by its answers. */
export function clientCapabilities(settings: RecordingSettings = DEFAULT_RECORDING_SETTINGS): ClientCapabilities {
  return {
    supportedCompression: SUPPORTED_COMPRESSION,
    sessionRecording: sessionRecordingAnswer(settings),
    captureDeadClicks: false,
    capturePerformance: capturePerformanceAnswer(settings),
    autocapture_opt_out: false,
    autocaptureExceptions: false,
    analytics: { endpoint: '/i/v0/e/' },
    elementsChainAsString: true,
    errorTracking: { autocaptureExceptions: false, suppressionRules: [] },
    heatmaps: false,
    surveys: false,
    defaultIdentifiedOnly: true,
    siteApps: [],
  }
}

/** A project whose settings were never read (or could not be): recording off. */
export const DEFAULT_CAPABILITIES: ClientCapabilities = Object.freeze(clientCapabilities())
