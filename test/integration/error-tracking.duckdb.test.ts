// Error tracking on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb).
import { startStack } from '../helpers/stack'
import { errorTrackingContract } from './error-tracking.contract'

errorTrackingContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb', ERROR_TRACKING_MAX_ISSUES: 1000 }))
