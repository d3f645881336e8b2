// RetentionQuery and EventsQuery on the embedded event store on DuckDB (EMBEDDED_EVENT_STORE=duckdb): insights-retention.contract.ts.
import { join } from 'node:path'
import { accessDuckDb } from '../../src/events/duckdb-access'
import { startStack } from '../helpers/stack'
import { retentionOverManyPersons } from './insights-retention-many'
import { retentionContract } from './insights-retention.contract'

const start = () => startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, EMBEDDED_EVENT_STORE: 'duckdb' })
retentionContract('embedded DuckDB store', start)

retentionOverManyPersons('embedded DuckDB store', start, async (stack, events, mapping) => {
  for (let i = 0; i < events.length; i += 20_000) await stack.services.events.insertBatch(events.slice(i, i + 20_000), { inDoubt: false })
  // the service's own instance of the file (one per process), as the flush worker's mapping copy writes it
  const duck = await accessDuckDb(join(stack.dataDir, 'events.duckdb'), { memoryMb: stack.config.EMBEDDED_DUCKDB_MEMORY_MB, threads: stack.config.EMBEDDED_DUCKDB_THREADS })
  await duck.upsertMapping(mapping)
  await duck.release()
})
