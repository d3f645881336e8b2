// FunnelsQuery on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): insight-funnels.contract.ts.
import { startStack } from '../helpers/stack'
import { FUNNEL_MAX_EVENTS, insightFunnelsContract } from './insight-funnels.contract'

insightFunnelsContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, QUERY_MAX_RESULT_BYTES: 64 * 1024, INSIGHTS_FUNNEL_MAX_EVENTS: FUNNEL_MAX_EVENTS, EMBEDDED_EVENT_STORE: 'duckdb' }))
