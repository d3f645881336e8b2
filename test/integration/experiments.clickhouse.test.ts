// Experiments on ClickHouse 18.16 and a real Postgres (servers started by the test helpers).
import { startStack } from '../helpers/stack'
import { experimentsContract } from './experiments.contract'

experimentsContract('ClickHouse 18.16 (real Postgres)', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 }))
