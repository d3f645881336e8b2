// The query API on a real ClickHouse cluster (2 shards × 2 replicas of 18.16, ZooKeeper): events on the Distributed
// table, the person mapping replicated to every node and joined locally on each shard.
import { afterAll, beforeAll } from 'bun:test'
import { startClickHouseCluster, type ClickHouseCluster } from '../helpers/clickhouse-cluster'
import { startStack } from '../helpers/stack'
import { queryApiContract } from './query-api.contract'

let cluster: ClickHouseCluster
beforeAll(async () => {
  cluster = await startClickHouseCluster({ shards: 2, replicas: 2 })
}, 180_000)
afterAll(async () => {
  await cluster?.destroy()
})

queryApiContract('a 2 × 2 ClickHouse cluster', () => {
  const database = `query_${crypto.randomUUID().replace(/-/g, '').slice(0, 10)}`
  return startStack(
    { postgres: 'embedded', clickhouse: 'embedded' },
    { FLUSH_INTERVAL_MS: 20, QUERY_MAX_RESULT_BYTES: 1024 * 1024, CLICKHOUSE_URL: `${cluster.nodes[0].server.url}/${database}`, CLICKHOUSE_CLUSTER: cluster.name },
  )
})
