// Web analytics on the embedded event store on SQLite (EMBEDDED_EVENT_STORE=sqlite).
import { startStack } from '../helpers/stack'
import { insightsWebContract } from './insights-web.contract'

insightsWebContract('embedded SQLite store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'sqlite' }))
