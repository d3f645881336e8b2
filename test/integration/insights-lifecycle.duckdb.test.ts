// LifecycleQuery on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): insights-lifecycle.contract.ts.
import { startStack } from '../helpers/stack'
import { lifecycleContract } from './insights-lifecycle.contract'

lifecycleContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
