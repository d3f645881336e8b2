// Personless visitors on ClickHouse 18.16 (a real server started by the test helpers) and real Postgres.
import { startStack } from '../helpers/stack'
import { personlessContract, stackDriver } from './personless.contract'

personlessContract('ClickHouse 18.16 (real Postgres)', () => stackDriver(() => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 })))
