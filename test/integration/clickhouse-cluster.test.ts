// The service on a real ClickHouse cluster: ZooKeeper and four ClickHouse servers on loopback, 2 shards × 2
// replicas (test/helpers/clickhouse-cluster.ts), with CLICKHOUSE_CLUSTER. What only a cluster can show: replicas
// that die and come back, a read served by a lagging replica, DDL that waits for every host, state kept per shard.
// Each test takes a database of its own and leaves every node running.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { batchBody, eventually, metric, startLoad } from '../chaos/load'
import { startClickHouseCluster, type ClickHouseCluster, type ClusterNode } from '../helpers/clickhouse-cluster'
import { auditViewStatement } from '../helpers/clickhouse-audit'
import { ROOT, spawnService, type ServiceProcess } from '../helpers/spawn-service'
import { freshDataDir, PERSONAL_KEY, PROJECT_KEY } from '../helpers/stack'
import { event } from './event-store.contract'

let cluster: ClickHouseCluster
beforeAll(async () => {
  cluster = await startClickHouseCluster({ shards: 2, replicas: 2 })
}, 120_000)
afterAll(async () => {
  await cluster?.destroy()
})

const node = (shard: number, replica: number): ClusterNode => cluster.nodes.find((n) => n.shard === shard && n.replica === replica)!
const freshDatabase = () => `cluster_${crypto.randomUUID().replace(/-/g, '').slice(0, 10)}`
const urlOf = (n: ClusterNode, database: string) => `${n.server.url}/${database}`
const storeOn = (n: ClusterNode, database: string) => new ClickHouseEventStore(urlOf(n, database), { cluster: cluster.name })
const scalar = async (n: ClusterNode, sql: string) => (await n.server.query(sql)).trim()

/** ON CLUSTER statements ever queued (each is a node in ZooKeeper's DDL queue). */
const ddlQueued = async () => Number(await scalar(node(1, 1), "SELECT count() FROM system.zookeeper WHERE path = '/clickhouse/task_queue/ddl'"))

/** The service's tables (migrated from node 1-1, all nodes up) and, on every node, an audit view of its local table. */
async function prepare(database: string): Promise<void> {
  const store = storeOn(node(1, 1), database)
  await store.init()
  await store.close()
  for (const n of cluster.nodes) {
    // Replicated like events_local, so that it deduplicates the blocks the local table deduplicates.
    const engine = `ReplicatedMergeTree('/clickhouse/tables/{shard}/${database}.events_local_inserted', '{replica}')`
    await n.server.query(auditViewStatement(database, 'events_local', { engine, settings: '' }))
  }
}

/** Wait until every replica has every part of these tables that its shard has (a view's table is `.inner.<view>`). */
async function syncReplicas(database: string, tables = ['events_local', '`.inner.events_local_inserted`']): Promise<void> {
  for (const n of cluster.nodes) for (const table of tables) await n.server.query(`SYSTEM SYNC REPLICA ${database}.${table}`)
}

/**
 * How often each uuid was stored, summed over the shards (counted on one replica of each), and the rows per shard.
 * Per shard, the audit's count or the local table's where that is higher: a replica killed between writing the
 * table and its views has stored rows the audit never sees (the retry's identical block is dropped whole).
 */
async function storedByShard(database: string, uuids: string[]): Promise<{ total: Map<string, number>; perShard: number[] }> {
  const total = new Map<string, number>()
  const perShard: number[] = []
  const wanted = new Set(uuids)
  for (const shard of [1, 2]) {
    const counts = new Map<string, number>()
    for (const table of ['events_local_inserted', 'events_local']) {
      const text = await node(shard, 1).server.query(`SELECT toString(uuid), count() FROM ${database}.${table} GROUP BY uuid FORMAT TSV`)
      for (const line of text.split('\n').filter(Boolean)) {
        const [uuid, n] = line.split('\t')
        if (wanted.has(uuid)) counts.set(uuid, Math.max(counts.get(uuid) ?? 0, Number(n)))
      }
    }
    let rows = 0
    for (const [uuid, n] of counts) {
      total.set(uuid, (total.get(uuid) ?? 0) + n)
      rows += n
    }
    perShard.push(rows)
  }
  return { total, perShard }
}

/** Per shard, what each replica holds: rows, distinct events and an order-free checksum of their uuids. */
async function replicaContents(database: string): Promise<string[][]> {
  return Promise.all(
    [1, 2].map((shard) =>
      Promise.all(
        cluster.shard(shard).map((n) => scalar(n, `SELECT count(), uniqExact(uuid), sum(cityHash64(toString(uuid))) FROM ${database}.events_local FORMAT TSV`)),
      ),
    ),
  )
}

/** Both replicas of each shard hold the same rows (a restarted replica may still be fetching what it missed). */
async function replicasConverge(database: string): Promise<{ equal: boolean; contents: string[][] }> {
  let contents: string[][] = []
  const equal = await eventually(async () => {
    await syncReplicas(database, ['events_local'])
    contents = await replicaContents(database)
    return contents.every(([a, b]) => a === b)
  }, 60_000, 500)
  return { equal, contents }
}

const exactlyOnce = (total: Map<string, number>, acked: string[]) => ({
  missing: acked.filter((u) => !total.has(u)).length,
  duplicated: [...total.values()].filter((n) => n > 1).length,
})

async function startService(on: ClusterNode, database: string, options: { waitMs?: number } = {}): Promise<ServiceProcess> {
  return spawnService(
    {
      DATA_DIR: await freshDataDir('embedded'),
      INIT_PROJECT_API_KEY: PROJECT_KEY,
      INIT_PERSONAL_API_KEY: PERSONAL_KEY,
      CLICKHOUSE_URL: urlOf(on, database),
      CLICKHOUSE_CLUSTER: cluster.name,
      FLUSH_INTERVAL_MS: '50',
      LOG_LEVEL: 'warn',
    },
    { waitMs: options.waitMs },
  )
}

const ready = async (s: ServiceProcess) => (await fetch(`${s.url}/_ready`).catch(() => null))?.status === 200

describe('a 2 × 2 ClickHouse cluster', () => {
  test('two services on different nodes, a replica SIGKILLed mid-insert and restarted: every acknowledged event stored exactly once, on both shards, replicas equal', async () => {
    const database = freshDatabase()
    await prepare(database)
    const a = await startService(node(1, 1), database)
    const b = await startService(node(2, 1), database)
    try {
      const loads = [a, b].map((s) => startLoad(() => s.url, { concurrency: 2, batchSize: 50, retry: true, pauseMs: 20 }))
      await Bun.sleep(1500)
      // Node 2-2 takes service a's inserts for shard 2 (about half of them: a replica is chosen at random): killed
      // while it is writing one.
      const victim = node(2, 2)
      await eventually(async () => Number(await scalar(victim, "SELECT count() FROM system.processes WHERE query LIKE 'INSERT%'")) > 0, 10_000, 2)
      await victim.server.kill()
      await Bun.sleep(2000)
      await cluster.restart(victim)
      await Bun.sleep(1500)
      await Promise.all(loads.map((l) => l.stop()))
      const acked = loads.flatMap((l) => l.acked)
      const sent = loads.flatMap((l) => l.sent)
      expect(acked.length).toBeGreaterThan(5000)

      const flushed = await eventually(async () => (await metric(a.url, 'pipeline_backlog_records')) === 0 && (await metric(b.url, 'pipeline_backlog_records')) === 0, 60_000, 250)
      expect(flushed).toBe(true)
      await syncReplicas(database)
      const { total, perShard } = await storedByShard(database, sent)
      expect(exactlyOnce(total, acked)).toEqual({ missing: 0, duplicated: 0 })
      expect(perShard[0]).toBeGreaterThan(0)
      expect(perShard[1]).toBeGreaterThan(0)
      const replicas = await replicasConverge(database)
      expect(replicas).toEqual({ equal: true, contents: replicas.contents })
      console.log(`cluster: ${acked.length} events acknowledged, stored ${perShard.join(' + ')} on the two shards; store outages (batches retried): ${[a, b].map((s) => s.logs().split('"outage":"started"').length - 1).join(' + ')}`)
    } finally {
      await Promise.all([a.stop(), b.stop()])
    }
  }, 180_000)

  test('the migration state is cluster-wide: every node, whichever its shard, knows what was applied, and a store starting there queues no DDL', async () => {
    const database = freshDatabase()
    const first = storeOn(node(1, 1), database)
    await first.init()
    await first.close()
    // every migration the first store applied (the events table, the person mapping), known on every node
    const migrations = String(readdirSync(join(ROOT, 'sql/clickhouse')).filter((f) => f.endsWith('.sql')).length)
    for (const n of cluster.nodes) {
      const known = await eventually(async () => (await scalar(n, `SELECT count() FROM ${database}.schema_migrations`)) === migrations, 10_000)
      expect({ node: n.name, known }).toEqual({ node: n.name, known: true })
    }
    const queued = await ddlQueued()
    const other = storeOn(node(2, 2), database)
    try {
      await other.init()
      expect(await other.insertBatch([event(), event()], { inDoubt: false })).toBe(2)
    } finally {
      await other.close()
    }
    expect(await ddlQueued()).toBe(queued)
  }, 60_000)

  test('a node starts and ingests while one replica of every shard is down', async () => {
    const database = freshDatabase()
    await prepare(database)
    const queued = await ddlQueued()
    const down = [node(1, 2), node(2, 2)]
    await Promise.all(down.map((n) => n.server.kill()))
    let service: ServiceProcess | undefined
    try {
      service = await startService(node(1, 1), database, { waitMs: 30_000 })
      expect(await eventually(() => ready(service!), 15_000)).toBe(true)
      const uuids = Array.from({ length: 100 }, () => crypto.randomUUID())
      const r = await fetch(`${service.url}/batch/`, { method: 'POST', body: batchBody(uuids), headers: { 'content-type': 'application/json' } })
      expect(r.status).toBe(200)
      // read back through the Distributed table: each shard from its live replica
      const stored = await eventually(async () => (await scalar(node(1, 1), `SELECT count() FROM ${database}.events WHERE event = 'chaos'`)) === '100', 15_000, 100)
      expect(stored).toBe(true)
      expect(await ddlQueued()).toBe(queued)
    } finally {
      await service?.stop()
      await Promise.all(down.map((n) => cluster.restart(n)))
    }
  }, 90_000)

  test('an in-doubt retry that checks a lagging replica resends the identical block, which the shard drops as a duplicate', async () => {
    const database = freshDatabase()
    await prepare(database)
    const lagging = node(1, 2)
    const writer = storeOn(node(1, 1), database)
    const retrier = storeOn(lagging, database)
    // 200 rows over two months, on both shards
    const rows = Array.from({ length: 200 }, (_, i) => event({ teamId: 1, distinctId: `lag-${i}`, timestamp: Date.UTC(2024, i % 2, 10, 0, 0, i) }))
    await lagging.server.query(`SYSTEM STOP FETCHES ${database}.events_local`)
    try {
      await Promise.all([writer.init(), retrier.init()])
      await writer.insertBatch(rows, { inDoubt: false })
      // The acknowledgement was lost; the retry comes later (backoff; 18.16 stores times to the second) and checks
      // what landed through a node whose replica of shard 1 has not fetched the rows yet.
      await Bun.sleep(1100)
      const resent = await retrier.insertBatch(rows, { inDoubt: true })
      expect(resent).toBeGreaterThan(0) // the check did miss rows that had landed
    } finally {
      await lagging.server.query(`SYSTEM START FETCHES ${database}.events_local`)
      await Promise.all([writer.close(), retrier.close()])
    }
    await syncReplicas(database)
    const { total } = await storedByShard(database, rows.map((r) => r.uuid))
    expect(exactlyOnce(total, rows.map((r) => r.uuid))).toEqual({ missing: 0, duplicated: 0 })
    const replicas = await replicasConverge(database)
    expect(replicas).toEqual({ equal: true, contents: replicas.contents })
  }, 60_000)
})
