// Surveys on ClickHouse 18.16 and a real Postgres (servers started by the test helpers): surveys.contract.ts.
import { startStack } from '../helpers/stack'
import { surveysContract } from './surveys.contract'

surveysContract('ClickHouse 18.16 (real Postgres)', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 }))
