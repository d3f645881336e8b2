// Which store the query API reads, from the configuration (the same one the events land in).
import type { Config } from '../config'
import { ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { parseClickHouseUrl } from '../events/clickhouse-target'
import { duckDbFile, duckDbSettings, sqliteFile } from '../events/factory'
import type { Metrics } from '../ops/metrics'
import { DuckDbQueryRunner } from './duckdb-runner'
import { ClickHouseMappingSink, DuckDbMappingSink, SqliteMappingSink, type MappingSink } from './person-mapping'
import { ClickHouseQueryRunner, SqliteQueryRunner, type QueryRunner } from './repository'

/** `metrics`: where the runner counts what it met (the embedded DuckDB store's shortages of memory) */
export function createQueryRunner(config: Config, metrics?: Pick<Metrics, 'embeddedDuckDbShortOfMemory'>): QueryRunner {
  if (!config.CLICKHOUSE_URL) {
    if (config.EMBEDDED_EVENT_STORE === 'duckdb') return new DuckDbQueryRunner(duckDbFile(config), duckDbSettings(config), { busyWaitMs: config.EMBEDDED_DUCKDB_BUSY_WAIT_MS, metrics })
    return new SqliteQueryRunner(sqliteFile(config))
  }
  return new ClickHouseQueryRunner(config.CLICKHOUSE_URL, { cluster: config.CLICKHOUSE_CLUSTER, maxMemoryBytes: config.QUERY_MAX_MEMORY })
}

/** Where the flush worker copies the person mapping to: the store the events land in. */
export function createMappingSink(config: Config): MappingSink {
  if (!config.CLICKHOUSE_URL) {
    if (config.EMBEDDED_EVENT_STORE === 'duckdb') return new DuckDbMappingSink(duckDbFile(config), duckDbSettings(config))
    return new SqliteMappingSink(sqliteFile(config))
  }
  const target = parseClickHouseUrl(config.CLICKHOUSE_URL)
  const client = createClient({ url: target.url, username: target.username, password: target.password, max_open_connections: 1, log: { level: ClickHouseLogLevel.OFF } })
  const sink = new ClickHouseMappingSink(client, target.database)
  return { versions: () => sink.versions(), write: (rows) => sink.write(rows), close: () => client.close() }
}
