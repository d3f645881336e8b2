// Which recording store the configuration asks for: ClickHouse beside the events (CLICKHOUSE_URL), else the
// embedded one in DATA_DIR.
import { join } from 'node:path'
import type { Config } from '../config'
import { ClickHouseRecordingStore } from './clickhouse-store'
import { SqliteRecordingStore } from './sqlite-store'
import type { RecordingStore } from './store'

export const recordingsFile = (config: Config) => join(config.DATA_DIR, 'recordings.sqlite')

export function createRecordingStore(config: Config): RecordingStore {
  if (config.CLICKHOUSE_URL) return new ClickHouseRecordingStore(config.CLICKHOUSE_URL, { cluster: config.CLICKHOUSE_CLUSTER })
  return new SqliteRecordingStore(recordingsFile(config))
}
