// FunnelsQuery on ClickHouse 18.16 (a real server started by the helpers): insight-funnels.contract.ts.
import { startStack } from '../helpers/stack'
import { FUNNEL_MAX_EVENTS, insightFunnelsContract } from './insight-funnels.contract'

// a small answer budget so that a funnel pages through several answers
insightFunnelsContract('ClickHouse 18.16', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20, QUERY_MAX_RESULT_BYTES: 64 * 1024, INSIGHTS_FUNNEL_MAX_EVENTS: FUNNEL_MAX_EVENTS }))
