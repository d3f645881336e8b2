// event-values on the embedded stores (PGlite, SQLite).
import { startStack } from '../helpers/stack'
import { eventValuesContract } from './event-values.contract'

eventValuesContract('embedded stores', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 }))
