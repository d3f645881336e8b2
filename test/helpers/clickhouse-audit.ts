// Every row ever inserted into a test database's events table, kept by a materialized view. The exactly-once checks
// count there: the events table is a ReplacingMergeTree, and a background merge may fold a duplicated event into one
// row before a check that counts the table itself sees it.
//
// The audit table mirrors the events table's own deduplication, so that it counts what the events table stored, not
// what was sent: a retried block the server dropped as a duplicate reaches the view all the same (current servers
// feed views the blocks their table deduplicated), so the audit table keeps every column, is partitioned the same
// way, and deduplicates the same way (non_replicated_deduplication_window where the events table has it; Replicated
// in a cluster, see clickhouse-cluster.ts).
import { createClient, type ClickHouseClient } from '@clickhouse/client'
import { ClickHouseEventStore, parseClickHouseUrl } from '../../src/events/clickhouse'
import { stringLiteral } from '../../src/events/dialect'

function clientFor(clickhouseUrl: string, injected?: ClickHouseClient) {
  const target = parseClickHouseUrl(clickhouseUrl)
  if (injected) return { target, client: injected, close: async () => undefined }
  const client = createClient({ url: target.url, username: target.username, password: target.password })
  return { target, client, close: () => client.close() }
}

/** The audit view over `table`: the same columns and partitions, deduplicating as `table` does. */
export function auditViewStatement(database: string, table: string, engine: string, settings: string): string {
  return `CREATE MATERIALIZED VIEW IF NOT EXISTS ${database}.${table}_inserted
          ENGINE = ${engine} PARTITION BY toYYYYMM(timestamp) ORDER BY (team_id, uuid) ${settings}
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
    // from 22.2 the events table deduplicates retried blocks (non_replicated_deduplication_window): so does this one
    const settings = store.dialect.dedupToken ? 'SETTINGS non_replicated_deduplication_window = 1000' : ''
    await client.command({ query: auditViewStatement(target.database, 'events', 'MergeTree', settings) })
  } finally {
    await Promise.all([store.close(), close()])
  }
}

/** How many times each of these uuids was stored (uuids never stored are absent). */
export async function insertedByUuid(
  clickhouseUrl: string,
  teamId: number,
  uuids: string[],
  options: { client?: ClickHouseClient; table?: string } = {},
): Promise<Map<string, number>> {
  const { target, client, close } = clientFor(clickhouseUrl, options.client)
  const counts = new Map<string, number>()
  try {
    for (let i = 0; i < uuids.length; i += 5000) {
      const rs = await client.query({
        // literals, not query parameters: 18.16 has none
        query: `SELECT toString(uuid) AS u, count() AS n FROM ${target.database}.${options.table ?? 'events_inserted'}
                WHERE team_id = ${Math.trunc(teamId)} AND toString(uuid) IN (${uuids.slice(i, i + 5000).map(stringLiteral).join(',')})
                GROUP BY u`,
        format: 'JSONEachRow',
      })
      for (const r of (await rs.json()) as { u: string; n: string | number }[]) counts.set(r.u, Number(r.n))
    }
  } finally {
    await close()
  }
  return counts
}
