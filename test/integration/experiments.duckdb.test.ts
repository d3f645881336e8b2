// Experiments on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): experiments.contract.ts.
import { startStack } from '../helpers/stack'
import { experimentsContract } from './experiments.contract'

experimentsContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
