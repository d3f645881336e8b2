// Which store the query API reads, from the configuration (the same one the events land in).
import { join } from 'node:path'
import type { Config } from '../config'
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { parseClickHouseUrl } from '../events/clickhouse-target'
import { ClickHouseMappingSink, SqliteMappingSink, type MappingSink } from './person-mapping'
import { ClickHouseQueryRunner, SqliteQueryRunner, type QueryRunner } from './repository'

export function createQueryRunner(config: Config): QueryRunner {
  if (!config.CLICKHOUSE_URL) return new SqliteQueryRunner(join(config.DATA_DIR, 'events.sqlite'))
  return new ClickHouseQueryRunner(config.CLICKHOUSE_URL, { cluster: config.CLICKHOUSE_CLUSTER, maxMemoryBytes: config.QUERY_MAX_MEMORY })
}

/** Where the flush worker copies the person mapping to: the store the events land in. */
export function createMappingSink(config: Config): MappingSink {
  if (!config.CLICKHOUSE_URL) return new SqliteMappingSink(join(config.DATA_DIR, 'events.sqlite'))
  const target = parseClickHouseUrl(config.CLICKHOUSE_URL)
  const client = createClient({ url: target.url, username: target.username, password: target.password, max_open_connections: 1, log: { level: ClickHouseLogLevel.OFF } })
  const sink = new ClickHouseMappingSink(client, target.database)
  return { versions: () => sink.versions(), write: (rows) => sink.write(rows), close: () => client.close() }
}
