// StickinessQuery on the embedded event store (SQLite, queries in a child process): insights-stickiness.contract.ts.
import { startStack } from '../helpers/stack'
import { stickinessContract } from './insights-stickiness.contract'

stickinessContract('embedded store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 }))
