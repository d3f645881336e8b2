// Personless visitors on a real ClickHouse cluster (2 shards × 2 replicas of 18.16, ZooKeeper): events on the
// Distributed table, the mapping (personless rows included) replicated to every node and joined locally on each shard.
import { afterAll, beforeAll } from 'bun:test'
import { startClickHouseCluster, type ClickHouseCluster } from '../helpers/clickhouse-cluster'
import { startStack } from '../helpers/stack'
import { personlessContract, stackDriver } from './personless.contract'

let cluster: ClickHouseCluster
beforeAll(async () => {
  cluster = await startClickHouseCluster({ shards: 2, replicas: 2 })
}, 180_000)
afterAll(async () => {
  await cluster?.destroy()
})

personlessContract('a 2 × 2 ClickHouse cluster', () => {
  const database = `personless_${crypto.randomUUID().replace(/-/g, '').slice(0, 10)}`
  return stackDriver(() =>
    startStack({ postgres: 'embedded', clickhouse: 'embedded' }, { FLUSH_INTERVAL_MS: 20, CLICKHOUSE_URL: `${cluster.nodes[0].server.url}/${database}`, CLICKHOUSE_CLUSTER: cluster.name }),
  )
})
