// Surveys on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): surveys.contract.ts.
import { startStack } from '../helpers/stack'
import { surveysContract } from './surveys.contract'

surveysContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
