// insight-answer-size on ClickHouse 18.16 and real Postgres (servers started by the test helpers).
import { startStack } from '../helpers/stack'
import { insightAnswerSizeContract } from './insight-answer-size.contract'

insightAnswerSizeContract('ClickHouse 18.16, real Postgres', () => startStack({ postgres: 'real', clickhouse: 'real' }, { FLUSH_INTERVAL_MS: 20 }))
