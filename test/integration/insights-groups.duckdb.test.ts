// Person, cohort and group breakdowns and group aggregation on the embedded event store on DuckDB: insights-groups.contract.ts.
import { startStack } from '../helpers/stack'
import { insightsGroupsContract } from './insights-groups.contract'

insightsGroupsContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
