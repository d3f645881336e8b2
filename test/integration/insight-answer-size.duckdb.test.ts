// Insight answer sizes on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): insight-answer-size.contract.ts.
import { startStack } from '../helpers/stack'
import { insightAnswerSizeContract } from './insight-answer-size.contract'

insightAnswerSizeContract('embedded DuckDB store', () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' }))
