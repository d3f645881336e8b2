// The query API on ClickHouse 18.16 (a real server started by the test helpers).
import { startStack } from '../helpers/stack'
import { queryApiContract } from './query-api.contract'

queryApiContract('ClickHouse 18.16', () => startStack({ postgres: 'embedded', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 }))
