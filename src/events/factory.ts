// Which event store the configuration asks for.
import { join } from 'node:path'
import type { Config } from '../config'
import { ClickHouseEventStore } from './clickhouse'
import { DuckDbEventStore } from './duckdb'
import type { DuckDbSettings } from './duckdb-database'
import { EmbeddedEventStore } from './embedded'
import type { EventStore } from './store'

/** `reads`: this instance answers the events API (the embedded store then reads on a worker thread). */
export function createEventStore(config: Config, options: { reads?: boolean } = {}): EventStore {
  if (config.CLICKHOUSE_URL) return new ClickHouseEventStore(config.CLICKHOUSE_URL, { cluster: config.CLICKHOUSE_CLUSTER })
  if (config.EMBEDDED_EVENT_STORE === 'duckdb') return new DuckDbEventStore(duckDbFile(config), duckDbSettings(config))
  return new EmbeddedEventStore(sqliteFile(config), { readOffThread: options.reads === true })
}

export const sqliteFile = (config: Config) => join(config.DATA_DIR, 'events.sqlite')
export const duckDbFile = (config: Config) => join(config.DATA_DIR, 'events.duckdb')
export const duckDbSettings = (config: Config): DuckDbSettings => ({
  memoryMb: config.EMBEDDED_DUCKDB_MEMORY_MB,
  threads: config.EMBEDDED_DUCKDB_THREADS,
  spillMb: config.EMBEDDED_DUCKDB_SPILL_MB,
  nice: config.ANALYTICS_THREAD_NICE,
})
