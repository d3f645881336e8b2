// Actions in insights on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb).
import { startStack } from '../helpers/stack'
import { insightsActionsContract } from './insights-actions.contract'

insightsActionsContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
