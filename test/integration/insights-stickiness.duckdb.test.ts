// StickinessQuery on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): insights-stickiness.contract.ts.
import { startStack } from '../helpers/stack'
import { stickinessContract } from './insights-stickiness.contract'

stickinessContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
