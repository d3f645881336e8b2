// Every operation an analytics thread runs, by name: the capabilities declare theirs (each `operations.ts`), this
// is their union. The serving thread imports only its type.
import { dashboardOperations } from '../dashboards/operations'
import { eventOperations } from '../events/operations'
import { experimentOperations } from '../experiments/operations'
import { errorTrackingOperations } from '../error-tracking/operations'
import type { Operations } from '../http/offload'
import { queryOperations } from '../insights/operations'
import { replayOperations } from '../replay/operations'
import { surveyOperations } from '../surveys/operations'
import type { QueryService } from '../query/service'

export const ANALYTICS_OPERATIONS = {
  ...queryOperations,
  ...dashboardOperations,
  ...experimentOperations,
  ...errorTrackingOperations,
  ...eventOperations,
  ...replayOperations,
  ...surveyOperations,
  /** statements running and waiting for a store slot on this thread (for /metrics and the tests) */
  'slots.use': (s: { query: QueryService }) => s.query.slotUse(),
} satisfies Operations<never>

export type AnalyticsOperations = typeof ANALYTICS_OPERATIONS
