// insight-answer-size on the embedded stores (PGlite, SQLite).
import { startStack } from '../helpers/stack'
import { insightAnswerSizeContract } from './insight-answer-size.contract'

insightAnswerSizeContract('embedded stores', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 }))
