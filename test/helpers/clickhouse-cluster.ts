// A throwaway, real ClickHouse cluster for tests, as README "A ClickHouse cluster" describes it: one ZooKeeper and
// shards × replicas ClickHouse servers on 127.0.0.1 (distinct http, tcp and interserver ports and directories), each
// with the same `remote_servers` (internal_replication: the Replicated tables copy rows between replicas, the
// Distributed table writes each row to one replica of its shard), its own `macros` ({shard}, {replica}), the
// `zookeeper` section, and `distributed_ddl` (ON CLUSTER statements).
//
//   const cluster = await startClickHouseCluster()          // 2 shards × 2 replicas
//   cluster.nodes[0].url                                     // http://default:@127.0.0.1:<port>
//   await cluster.destroy()
import { startClickHouse, type ClickHouseServer } from './clickhouse-server'
import { reservePort, sleep } from './server-process'
import { startZooKeeper, type ZooKeeperServer } from './zookeeper'

export const CLUSTER_NAME = 'phog_cluster'

export interface ClusterNode {
  /** 1-based, as in the macros */
  shard: number
  replica: number
  /** the {replica} macro: unique in the cluster */
  name: string
  server: ClickHouseServer
}

export interface ClickHouseCluster {
  name: string
  zookeeper: ZooKeeperServer
  nodes: ClusterNode[]
  /** the nodes of one shard */
  shard(n: number): ClusterNode[]
  /** Start a stopped or killed node again and wait until its replicas take writes (a killed node's ZooKeeper session must expire first). */
  restart(node: ClusterNode): Promise<void>
  /** Stops everything and removes the temp dirs. */
  destroy(): Promise<void>
}

interface NodePorts {
  shard: number
  replica: number
  http: number
  tcp: number
  interserver: number
}

function nodeConfig(self: NodePorts, all: NodePorts[], zookeeperPort: number): string {
  const shards = [...new Set(all.map((n) => n.shard))].map(
    (shard) => `      <shard>
        <internal_replication>true</internal_replication>
${all
  .filter((n) => n.shard === shard)
  .map((n) => `        <replica><host>127.0.0.1</host><port>${n.tcp}</port></replica>`)
  .join('\n')}
      </shard>`,
  )
  return `  <remote_servers>
    <${CLUSTER_NAME}>
${shards.join('\n')}
    </${CLUSTER_NAME}>
  </remote_servers>
  <zookeeper>
    <node><host>127.0.0.1</host><port>${zookeeperPort}</port></node>
    <session_timeout_ms>5000</session_timeout_ms>
  </zookeeper>
  <macros>
    <shard>${self.shard}</shard>
    <replica>node-${self.shard}-${self.replica}</replica>
  </macros>
  <distributed_ddl>
    <path>/clickhouse/task_queue/ddl</path>
  </distributed_ddl>
`
}

export async function startClickHouseCluster(options: { shards?: number; replicas?: number } = {}): Promise<ClickHouseCluster> {
  const shards = options.shards ?? 2
  const replicas = options.replicas ?? 2
  const zookeeper = await startZooKeeper()
  const started: ClickHouseServer[] = []
  try {
    const layout: NodePorts[] = []
    for (let shard = 1; shard <= shards; shard++) {
      for (let replica = 1; replica <= replicas; replica++) {
        layout.push({ shard, replica, http: await reservePort(), tcp: await reservePort(), interserver: await reservePort() })
      }
    }
    const nodes = await Promise.all(
      layout.map(async (n): Promise<ClusterNode> => {
        const server = await startClickHouse({
          name: `phog-ch-${n.shard}-${n.replica}-`,
          httpPort: n.http,
          tcpPort: n.tcp,
          interserverPort: n.interserver,
          extraConfig: nodeConfig(n, layout, zookeeper.port),
        })
        started.push(server)
        return { shard: n.shard, replica: n.replica, name: `node-${n.shard}-${n.replica}`, server }
      }),
    )
    let destroying: Promise<void> | undefined
    return {
      name: CLUSTER_NAME,
      zookeeper,
      nodes,
      shard: (n) => nodes.filter((node) => node.shard === n),
      async restart(node) {
        await node.server.start()
        const deadline = Date.now() + 60_000
        for (;;) {
          const readonly = (await node.server.query('SELECT count() FROM system.replicas WHERE is_readonly OR is_session_expired')).trim()
          if (readonly === '0') return
          if (Date.now() > deadline) throw new Error(`${node.name}: replicas still read-only 60 s after its restart`)
          await sleep(100)
        }
      },
      destroy() {
        destroying ??= (async () => {
          await Promise.all(nodes.map((node) => node.server.destroy()))
          await zookeeper.destroy()
        })()
        return destroying
      },
    }
  } catch (error) {
    await Promise.all(started.map((s) => s.destroy().catch(() => undefined)))
    await zookeeper.destroy()
    throw error
  }
}
