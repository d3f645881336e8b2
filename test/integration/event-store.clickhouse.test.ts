import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { sharedClickHouse } from '../helpers/shared-servers'
import { eventStoreContract } from './event-store.contract'

eventStoreContract('real ClickHouse', {
  make: async () => {
    const server = await sharedClickHouse()
    const store = new ClickHouseEventStore(`${server.url}/contract_${crypto.randomUUID().slice(0, 8)}`)
    await store.init()
    return store
  },
})
