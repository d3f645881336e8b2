// LifecycleQuery on the embedded event store (SQLite, queries in a child process): insights-lifecycle.contract.ts.
import { startStack } from '../helpers/stack'
import { lifecycleContract } from './insights-lifecycle.contract'

lifecycleContract('embedded store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 }))
