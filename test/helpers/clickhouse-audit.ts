// Every row ever inserted into a test database's events table, kept by a materialized view. The exactly-once checks
// count there: the events table is a ReplacingMergeTree, and a background merge may fold a duplicated event into one
// row before a check that counts the table itself sees it.
//
// Where the events table deduplicates blocks (from 22.2: non_replicated_deduplication_window; in a cluster: the
// Replicated table), the audit table must deduplicate the same blocks, so that it counts what the events table
// stored, not what was sent: a retried block the server dropped still reaches the view (current servers feed views
// the blocks their table deduplicated). It then keeps every column, is partitioned the same way (a token is
// deduplicated per partition) and deduplicates the same way. On 18.16 alone nothing is deduplicated, and the audit
// keeps only what it counts (copying whole rows made the ClickHouse outage test take 82 s instead of 59).
import { createClient, type ClickHouseClient } from '@clickhouse/client'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { parseClickHouseUrl } from '../../src/events/clickhouse-target'
import { stringLiteral } from '../../src/events/dialect'

function clientFor(clickhouseUrl: string, injected?: ClickHouseClient) {
  const target = parseClickHouseUrl(clickhouseUrl)
  if (injected) return { target, client: injected, close: async () => undefined }
  const client = createClient({ url: target.url, username: target.username, password: target.password })
  return { target, client, close: () => client.close() }
}

/**
 * The audit view over `table`; `deduplicating`: the engine and settings that make the audit table drop the blocks
 * `table` drops.
 */
export function auditViewStatement(database: string, table: string, deduplicating?: { engine: string; settings: string }): string {
  const view = `CREATE MATERIALIZED VIEW IF NOT EXISTS ${database}.${table}_inserted`
  if (!deduplicating) return `${view} ENGINE = MergeTree ORDER BY (team_id, uuid) AS SELECT team_id, uuid FROM ${database}.${table}`
  return `${view} ENGINE = ${deduplicating.engine} PARTITION BY toYYYYMM(timestamp) ORDER BY (team_id, uuid) ${deduplicating.settings}
          AS SELECT * FROM ${database}.${table}`
}

/**
 * Create the service's tables now, and the audit view beside them; call before anything is inserted. `client`: the
 * engine to use instead of the URL's server (chDB); the URL then only names the database.
 */
export async function auditInserts(clickhouseUrl: string, options: { client?: ClickHouseClient } = {}): Promise<void> {
  const store = new ClickHouseEventStore(clickhouseUrl, { client: options.client })
  const { target, client, close } = clientFor(clickhouseUrl, options.client)
  try {
    await store.init()
    const deduplicating = store.dialect.dedupToken
      ? { engine: 'MergeTree', settings: 'SETTINGS non_replicated_deduplication_window = 1000' }
      : undefined
    await client.command({ query: auditViewStatement(target.database, 'events', deduplicating) })
  } finally {
    await Promise.all([store.close(), close()])
  }
}

/**
 * How many times each of these uuids was stored (uuids never stored are absent): the audit's count, or the events
 * table's where that is higher. A server stopped in the middle of an insert may have written the events table and
 * not yet its views; the retry then finds the rows stored and leaves them out, and only the table shows them.
 */
export async function insertedByUuid(
  clickhouseUrl: string,
  teamId: number,
  uuids: string[],
  options: { client?: ClickHouseClient } = {},
): Promise<Map<string, number>> {
  const { target, client, close } = clientFor(clickhouseUrl, options.client)
  const counts = new Map<string, number>()
  const keep = (u: string, n: string | number) => counts.set(u, Math.max(counts.get(u) ?? 0, Number(n)))
  const count = `SELECT toString(uuid) AS u, count() AS n FROM ${target.database}`
  try {
    for (const table of ['events_inserted', 'events']) {
      if (uuids.length > 20_000) {
        // a load test's hundreds of thousands: one pass over the project's rows, not a scan per chunk of 5,000
        const wanted = new Set(uuids)
        const rs = await client.query({ query: `${count}.${table} WHERE team_id = ${Math.trunc(teamId)} GROUP BY u`, format: 'TabSeparated' })
        for (const line of (await rs.text()).split('\n')) {
          const [u, n] = line.split('\t')
          if (n !== undefined && wanted.has(u)) keep(u, n)
        }
        continue
      }
      for (let i = 0; i < uuids.length; i += 5000) {
        const rs = await client.query({
          // literals, not query parameters: 18.16 has none
          query: `${count}.${table} WHERE team_id = ${Math.trunc(teamId)} AND toString(uuid) IN (${uuids.slice(i, i + 5000).map(stringLiteral).join(',')}) GROUP BY u`,
          format: 'JSONEachRow',
        })
        for (const r of (await rs.json()) as { u: string; n: string | number }[]) keep(r.u, r.n)
      }
    }
  } finally {
    await close()
  }
  return counts
}
