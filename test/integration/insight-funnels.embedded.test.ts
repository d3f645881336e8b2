// FunnelsQuery on the embedded event store (SQLite): insight-funnels.contract.ts.
import { startStack } from '../helpers/stack'
import { FUNNEL_MAX_EVENTS, insightFunnelsContract } from './insight-funnels.contract'

// a small answer budget so that a funnel pages through several answers
insightFunnelsContract('embedded store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20, QUERY_MAX_RESULT_BYTES: 64 * 1024, INSIGHTS_FUNNEL_MAX_EVENTS: FUNNEL_MAX_EVENTS }))
