// Personless visitors on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb).
import { startStack } from '../helpers/stack'
import { personlessContract, stackDriver } from './personless.contract'

personlessContract('embedded DuckDB store', () => stackDriver(() => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' })))
