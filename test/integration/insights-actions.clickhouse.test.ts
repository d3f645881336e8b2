// Actions in insights on ClickHouse 18.16 (a real server started by the test helpers) and real Postgres.
import { startStack } from '../helpers/stack'
import { insightsActionsContract } from './insights-actions.contract'

insightsActionsContract('ClickHouse 18.16 (real Postgres)', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 }))
