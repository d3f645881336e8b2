// The query API on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb, queries in this process).
import { startStack } from '../helpers/stack'
import { queryApiContract } from './query-api.contract'

queryApiContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, QUERY_MAX_RESULT_BYTES: 1024 * 1024, EMBEDDED_EVENT_STORE: 'duckdb' }))
