// Personless visitors on the embedded event store on SQLite (queries in a child process).
import { startStack } from '../helpers/stack'
import { personlessContract, stackDriver } from './personless.contract'

personlessContract('embedded store', () => stackDriver(() => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { EMBEDDED_EVENT_STORE: 'sqlite', FLUSH_INTERVAL_MS: 20 })))
