// Experiments on the embedded stores (PGlite and the SQLite event store).
import { startStack } from '../helpers/stack'
import { experimentsContract } from './experiments.contract'

experimentsContract('embedded store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 }))
