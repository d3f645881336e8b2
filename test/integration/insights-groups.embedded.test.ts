// Person, cohort and group breakdowns and group aggregation on the embedded event store on SQLite: insights-groups.contract.ts.
import { startStack } from '../helpers/stack'
import { insightsGroupsContract } from './insights-groups.contract'

insightsGroupsContract('embedded store (SQLite)', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 }))
