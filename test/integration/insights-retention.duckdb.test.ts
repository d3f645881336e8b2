// RetentionQuery and EventsQuery on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): insights-retention.contract.ts.
import { startStack } from '../helpers/stack'
import { retentionContract } from './insights-retention.contract'

retentionContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
