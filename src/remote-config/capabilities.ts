// What this service offers the client libraries, told to them by /decide, /flags and the remote config:
// where to send events and how they may compress them; everything this service does not do is off.

/** posthog-js gzips only when it sees gzip-js, and falls back to plain JSON otherwise. */
export const SUPPORTED_COMPRESSION = ['gzip', 'gzip-js', 'lz64']

export function clientCapabilities(): Record<string, unknown> {
  return {
    supportedCompression: SUPPORTED_COMPRESSION,
    sessionRecording: false,
    captureDeadClicks: false,
    capturePerformance: false,
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
