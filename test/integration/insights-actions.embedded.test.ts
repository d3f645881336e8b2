// Actions in insights on the embedded event store (SQLite, queries in a child process).
import { startStack } from '../helpers/stack'
import { insightsActionsContract } from './insights-actions.contract'

insightsActionsContract('embedded store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 }), { regex: false })
