// TrendsQuery on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb).
import { startStack } from '../helpers/stack'
import { insightsTrendsContract } from './insights-trends.contract'

insightsTrendsContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
