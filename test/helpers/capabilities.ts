// What the service tells posthog-js it offers, written out here (not imported from src) so that a change to
// it is a change the tests notice. /decide's config and the remote config both carry it (a project with its replay
// settings untouched: recording off).
export const EXPECTED_CAPABILITIES = {
  supportedCompression: ['gzip', 'gzip-js', 'lz64'],
  sessionRecording: false,
  captureDeadClicks: false,
  // network timing in recordings: on by default, as PostHog's capture_performance_opt_in
  capturePerformance: { network_timing: true, web_vitals: false, web_vitals_allowed_metrics: null },
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
