// RetentionQuery and EventsQuery on ClickHouse 18.16 (a real server started by the test helpers).
import { startStack } from '../helpers/stack'
import { retentionContract } from './insights-retention.contract'

retentionContract('ClickHouse 18.16 (real Postgres)', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 }))
