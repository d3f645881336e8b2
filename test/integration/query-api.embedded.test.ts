// The query API on the embedded event store (SQLite, queries in a child process).
import { startStack } from '../helpers/stack'
import { queryApiContract } from './query-api.contract'

queryApiContract('embedded store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20, QUERY_MAX_RESULT_BYTES: 1024 * 1024 }))
