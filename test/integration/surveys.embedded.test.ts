// Surveys on the embedded stores (PGlite and the SQLite event store): surveys.contract.ts.
import { startStack } from '../helpers/stack'
import { surveysContract } from './surveys.contract'

surveysContract('embedded store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 }))
