// TrendsQuery on the embedded event store (SQLite, queries in a child process).
import { startStack } from '../helpers/stack'
import { insightsTrendsContract } from './insights-trends.contract'

insightsTrendsContract('embedded store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 }))
