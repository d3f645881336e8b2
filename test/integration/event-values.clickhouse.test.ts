// event-values on ClickHouse 18.16 and real Postgres (servers started by the test helpers).
import { startStack } from '../helpers/stack'
import { eventValuesContract } from './event-values.contract'

eventValuesContract('ClickHouse 18.16, real Postgres', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 }))
