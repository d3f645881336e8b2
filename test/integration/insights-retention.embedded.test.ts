// RetentionQuery and EventsQuery on the embedded event store (SQLite, queries in a child process).
import { startStack } from '../helpers/stack'
import { retentionContract } from './insights-retention.contract'

retentionContract('embedded store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20 }))
