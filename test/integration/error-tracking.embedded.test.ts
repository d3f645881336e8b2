// Error tracking on the embedded stores (PGlite and the SQLite event store).
import { startStack } from '../helpers/stack'
import { errorTrackingContract } from './error-tracking.contract'

errorTrackingContract('embedded store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20, ERROR_TRACKING_MAX_ISSUES: 1000 }))
