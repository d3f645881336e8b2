// The modern ClickHouse path for real: the ClickHouse 26.7 engine in-process (chDB, see test/helpers/chdb.ts),
// through the same ClickHouseEventStore the service runs against a server.
import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { StoreError, type StoredEvent } from '../../src/events/store'
import { silentLogger } from '../../src/log'
import { Checkpoint } from '../../src/pipeline/checkpoint'
import type { Batch } from '../../src/pipeline/consumer'
import { DeadLetters } from '../../src/pipeline/dead-letters'
import { isolatePoison } from '../../src/pipeline/isolate'
import { MetricsRecorder } from '../../src/pipeline/metrics-relay'
import type { LoggedRecord } from '../../src/pipeline/ring'
import { StoreWriter, storedEventOf } from '../../src/pipeline/store-writer'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { auditInserts, insertedByUuid } from '../helpers/clickhouse-audit'
import { tempDir } from '../helpers/temp'
import { event, eventStoreContract } from './event-store.contract'

const database = (name: string) => `${name}_${crypto.randomUUID().slice(0, 8)}`

describeWithChdb('the modern ClickHouse path on chDB', () => {
  eventStoreContract('chDB (ClickHouse 26.7)', {
    make: async () => {
      const store = new ClickHouseEventStore(chdbUrl(database('contract')), { client: chdbClient() })
      await store.init()
      return store
    },
  })

  /** A store on a fresh database, with the audit view that counts what the events table stored. */
  async function auditedStore() {
    const url = chdbUrl(database('modern'))
    await auditInserts(url, { client: chdbClient() })
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    const stored = async (rows: StoredEvent[]) => {
      const counts = await insertedByUuid(url, 1, rows.map((r) => r.uuid), { client: chdbClient() })
      return rows.map((r) => counts.get(r.uuid) ?? 0)
    }
    return { url, store, stored }
  }

  test('the dialect is chosen from SELECT version(): the modern schema', async () => {
    const url = chdbUrl(database('dialect'))
    const store = new ClickHouseEventStore(url, { client: chdbClient() })
    await store.init()
    expect(store.dialect.name).toBe('modern')
    expect(store.dialect.version).toMatch(/^26\.7\./)
    expect(store.dialect.dedupToken).toBe(true)
    expect(store.timestampPrecisionMs).toBe(1)
    const rs = await chdbClient().query({
      query: `SELECT name, type FROM system.columns WHERE database = '${store.database}' AND table = 'events' ORDER BY position`,
      format: 'JSONEachRow',
    })
    const types = Object.fromEntries(((await rs.json()) as { name: string; type: string }[]).map((c) => [c.name, c.type]))
    expect(types).toMatchObject({ timestamp: "DateTime64(6, 'UTC')", event: 'LowCardinality(String)', _inserted_at: "DateTime64(6, 'UTC')" })
    const engine = await chdbClient().query({
      query: `SELECT engine_full FROM system.tables WHERE database = '${store.database}' AND name = 'events'`,
      format: 'JSONEachRow',
    })
    expect(((await engine.json()) as { engine_full: string }[])[0].engine_full).toContain('non_replicated_deduplication_window = 1000')
  })

  test('a retried insert whose first attempt landed is a no-op: the deduplication token', async () => {
    const { store, stored } = await auditedStore()
    const rows = Array.from({ length: 50 }, () => event())
    await store.insertBatch(rows, { inDoubt: false })
    // the acknowledgement was lost and the retry is not even marked in doubt: the server drops the block itself
    await store.insertBatch(rows, { inDoubt: false })
    expect(await stored(rows)).toEqual(rows.map(() => 1))
    // different rows are never taken for a retry
    const others = Array.from({ length: 50 }, () => event())
    await store.insertBatch(others, { inDoubt: false })
    expect(await stored(others)).toEqual(others.map(() => 1))
  })

  test('an in-doubt retry stores each row once: all of it landed, part of it, or none', async () => {
    const { store, stored } = await auditedStore()
    const landed = Array.from({ length: 30 }, () => event())
    await store.insertBatch(landed, { inDoubt: false })
    expect(await store.insertBatch(landed, { inDoubt: true })).toBe(0)
    const half = Array.from({ length: 30 }, () => event())
    await store.insertBatch(half.slice(0, 15), { inDoubt: false })
    expect(await store.insertBatch(half, { inDoubt: true })).toBe(15)
    const none = Array.from({ length: 30 }, () => event())
    expect(await store.insertBatch(none, { inDoubt: true })).toBe(30)
    for (const rows of [landed, half, none]) expect(await stored(rows)).toEqual(rows.map(() => 1))
  })

  test('an in-doubt retry whose check misses rows that landed (a lagging replica) is dropped by the batch\'s token, not stored twice', async () => {
    const { url, store, stored } = await auditedStore()
    // A check that sees only part of what landed, as one reading a replica that has not fetched every part yet.
    const client = chdbClient()
    const lagging = Object.create(client) as typeof client
    lagging.query = ((params: Parameters<typeof client.query>[0]) =>
      client.query(
        params.query.startsWith('SELECT DISTINCT toString(uuid)') ? { ...params, query: `${params.query} AND cityHash64(distinct_id) % 2 = 0` } : params,
      )) as typeof client.query
    const retrying = new ClickHouseEventStore(url, { client: lagging })
    await retrying.init()
    const rows = Array.from({ length: 100 }, (_, i) => event({ distinctId: `lagging-${i}`, timestamp: Date.UTC(2024, i % 3, 5) }))
    await store.insertBatch(rows, { inDoubt: false })
    await Bun.sleep(5) // a later attempt: were _inserted_at the attempt's time, the block would differ
    const resent = await retrying.insertBatch(rows, { inDoubt: true })
    expect(resent).toBeGreaterThan(0)
    expect(resent).toBeLessThan(rows.length)
    expect(await stored(rows)).toEqual(rows.map(() => 1))
  })

  test('the audit view counts a duplicate the events table did store', async () => {
    const { store, stored } = await auditedStore()
    const rows = [event(), event()]
    await store.insertBatch(rows, { inDoubt: false })
    // the same events again in another batch (a client that resent them with others): the table keeps both copies
    // until a merge folds them, and the audit sees them
    await store.insertBatch([...rows, event()], { inDoubt: false })
    expect(await stored(rows)).toEqual([2, 2])
  })

  test('a historical batch spanning more than 100 months lands whole instead of wedging the log', async () => {
    const { store, stored } = await auditedStore()
    // ten years of history in one /batch/: 120 monthly partitions, more than a server takes in one insert
    const rows = Array.from({ length: 240 }, (_, i) => event({ timestamp: Date.UTC(2010, Math.floor(i / 2), 15) }))
    const refused = await store.insertBatch(rows, { inDoubt: false }).catch((error) => error)
    expect(refused).toBeInstanceOf(StoreError)
    expect((refused as StoreError).message).toMatch(/too many partitions/i)

    // The store writer calls it the batch's fault, so the consumer splits the batch at once instead of retrying it.
    const dir = tempDir('phog-chdb-writer-')
    const deadLetters = new DeadLetters(join(dir, 'dlq'))
    const writer = new StoreWriter({
      events: store,
      checkpoint: new Checkpoint(join(dir, 'checkpoint')),
      deadLetters,
      metrics: new MetricsRecorder(),
      log: silentLogger,
    })
    const batch = batchOf(rows)
    const failure = await writer.handle(batch, false).catch((error) => error)
    expect(writer.rejects(failure)).toBe(true)
    const isolated = await isolatePoison(batch, {
      handler: writer,
      isDefinite: (e) => writer.rejects(e),
      storeAnswers: () => writer.probe(),
      poison: (_consumer, events, reason) => deadLetters.write(events.map((e) => storedEventOf(e.record, e.event)), reason, ''),
    })
    expect(isolated).toBe(0)
    expect(deadLetters.list()).toEqual([])
    expect(await stored(rows)).toEqual(rows.map(() => 1))
  })
})

/** The rows as the log hands them to the store writer: one record of one request. */
function batchOf(rows: StoredEvent[]): Batch {
  const record: LoggedRecord = {
    seq: 1,
    projectId: 1,
    receivedAt: rows[0].createdAt,
    events: rows.map((r) => ({ uuid: r.uuid, event: r.event, distinctId: r.distinctId, properties: JSON.parse(r.properties), timestamp: r.timestamp })),
    dropped: new Map(),
    size: 1,
    decodedSize: 1,
  }
  return { records: [record], firstSeq: 1, lastSeq: 1, events: rows.length, items: rows.length, bytes: 1 }
}
