// Event and property values on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): event-values.contract.ts.
import { startStack } from '../helpers/stack'
import { eventValuesContract } from './event-values.contract'

eventValuesContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
