// The issues API's reads, run on an analytics thread (src/analytics/): the routes check the key and the parameters
// and hand over plain arguments.
import type { Operations } from '../http/offload'
import type { ErrorTrackingService, IssueListParams } from './service'

interface ErrorTrackingServices {
  errorTracking: ErrorTrackingService
}

export const errorTrackingOperations = {
  'errorTracking.list': (s: ErrorTrackingServices, [teamId, params, url]: [number, IssueListParams, string], signal: AbortSignal) => s.errorTracking.list(teamId, params, url, signal),
  'errorTracking.get': (s: ErrorTrackingServices, [teamId, id, range, eventLimit]: [number, string, { dateFrom: number; dateTo: number }, number], signal: AbortSignal) =>
    s.errorTracking.get(teamId, id, range, eventLimit, signal),
} satisfies Operations<ErrorTrackingServices>
