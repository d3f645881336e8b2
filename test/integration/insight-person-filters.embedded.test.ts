// insight-person-filters on the embedded stores (PGlite, SQLite).
import { startStack } from '../helpers/stack'
import { insightPersonFiltersContract } from './insight-person-filters.contract'

insightPersonFiltersContract('embedded stores', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 }))
