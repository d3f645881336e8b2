// The HogQL functions (docs/query.md "Functions") through POST /api/projects/:id/query/ on the embedded DuckDB store,
// the embedded SQLite store and ClickHouse 18.16, the same events captured into each: every answer the one the
// contract worked out (the current engine, chDB: query-functions.chdb.test.ts).
import { startStack } from '../helpers/stack'
import { captured, queryFunctionsContract } from './query-functions.contract'

queryFunctionsContract('embedded DuckDB store', () => captured('duckdb', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' })))
queryFunctionsContract('embedded SQLite store', () => captured('sqlite', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'sqlite' })))
queryFunctionsContract('ClickHouse 18.16', () => captured('clickhouse-legacy', () => startStack({ postgres: 'embedded', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 })))
