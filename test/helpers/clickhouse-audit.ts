// Every row ever inserted into a test database's events table, kept by a materialized view in a plain
// MergeTree. The exactly-once checks count there: the events table is a ReplacingMergeTree, and a background
// merge may fold a duplicated event into one row before a check that counts the table itself sees it.
import { createClient } from '@clickhouse/client'
import { ClickHouseEventStore, parseClickHouseUrl } from '../../src/events/clickhouse'
import { stringLiteral } from '../../src/events/dialect'

function clientFor(clickhouseUrl: string) {
  const target = parseClickHouseUrl(clickhouseUrl)
  return { target, client: createClient({ url: target.url, username: target.username, password: target.password }) }
}

/** Create the service's tables now, and the audit view beside them; call before anything is inserted. */
export async function auditInserts(clickhouseUrl: string): Promise<void> {
  const store = new ClickHouseEventStore(clickhouseUrl)
  const { target, client } = clientFor(clickhouseUrl)
  try {
    await store.init()
    await client.command({
      query: `CREATE MATERIALIZED VIEW IF NOT EXISTS ${target.database}.events_inserted ENGINE = MergeTree ORDER BY (team_id, uuid)
              AS SELECT team_id, uuid FROM ${target.database}.events`,
    })
  } finally {
    await Promise.all([store.close(), client.close()])
  }
}

/** How many times each of these uuids was inserted (uuids never inserted are absent). */
export async function insertedByUuid(clickhouseUrl: string, teamId: number, uuids: string[]): Promise<Map<string, number>> {
  const { target, client } = clientFor(clickhouseUrl)
  const counts = new Map<string, number>()
  try {
    for (let i = 0; i < uuids.length; i += 5000) {
      const rs = await client.query({
        // literals, not query parameters: 18.16 has none
        query: `SELECT toString(uuid) AS u, count() AS n FROM ${target.database}.events_inserted
                WHERE team_id = ${Math.trunc(teamId)} AND toString(uuid) IN (${uuids.slice(i, i + 5000).map(stringLiteral).join(',')})
                GROUP BY u`,
        format: 'JSONEachRow',
      })
      for (const r of (await rs.json()) as { u: string; n: string | number }[]) counts.set(r.u, Number(r.n))
    }
  } finally {
    await client.close()
  }
  return counts
}
