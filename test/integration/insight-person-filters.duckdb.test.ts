// Insight person filters on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): insight-person-filters.contract.ts.
import { startStack } from '../helpers/stack'
import { insightPersonFiltersContract } from './insight-person-filters.contract'

insightPersonFiltersContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
