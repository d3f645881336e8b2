// Person, cohort and group breakdowns and group aggregation on ClickHouse 18.16 and real Postgres: insights-groups.contract.ts.
import { startStack } from '../helpers/stack'
import { insightsGroupsContract } from './insights-groups.contract'

insightsGroupsContract('ClickHouse 18.16 (real Postgres)', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 }))
