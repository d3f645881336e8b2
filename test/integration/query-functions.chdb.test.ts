// The HogQL functions (docs/query.md "Functions") on the current ClickHouse engine (chDB 26.7, in-process): the
// contract's events written through the event store, the query service over them, every answer the one the
// contract worked out, as on the embedded stores and ClickHouse 18.16 (query-functions.test.ts).
import { ApiError } from '../../src/http/errors'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { ClickHouseQueryRunner } from '../../src/query/repository'
import { QueryService } from '../../src/query/service'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { event } from './event-store.contract'
import { FUNCTIONS_EVENTS, queryFunctionsContract } from './query-functions.contract'

describeWithChdb('query functions on chDB (ClickHouse 26.7)', () => {
  queryFunctionsContract('chDB', async () => {
    const url = chdbUrl(`functions_${crypto.randomUUID().slice(0, 8)}`)
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    // the properties as capture stores them: the distinct id among them
    const rows = FUNCTIONS_EVENTS.map((e) => event({ teamId: 1, event: e.event, distinctId: e.distinctId, timestamp: e.timestamp, properties: JSON.stringify({ distinct_id: e.distinctId, ...e.properties }) }))
    await store.insertBatch(rows, { inDoubt: false })
    const service = new QueryService(new ClickHouseQueryRunner(url, { client: chdbClient() }), { timeoutMs: 30_000, maxResultBytes: 64 * 1024 * 1024 })
    return {
      dialect: 'clickhouse-modern',
      async query(text: string) {
        try {
          return { status: 200, body: await service.run(1, text) }
        } catch (error) {
          if (error instanceof ApiError) return { status: error.status, body: error.toBody() }
          throw error
        }
      },
      close: () => store.close(),
    }
  })
})
