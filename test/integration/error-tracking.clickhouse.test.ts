// Error tracking on ClickHouse 18.16 and a real Postgres (servers started by the test helpers).
import { startStack } from '../helpers/stack'
import { errorTrackingContract } from './error-tracking.contract'

errorTrackingContract('ClickHouse 18.16 (real Postgres)', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20, ERROR_TRACKING_MAX_ISSUES: 1000 }))
