// Which event store the configuration asks for.
import { join } from 'node:path'
import type { Config } from '../config'
import { ClickHouseEventStore } from './clickhouse'
import { EmbeddedEventStore } from './embedded'
import type { EventStore } from './store'

/** `reads`: this instance answers the events API (the embedded store then reads on a worker thread). */
export function createEventStore(config: Config, options: { reads?: boolean } = {}): EventStore {
  return config.CLICKHOUSE_URL
    ? new ClickHouseEventStore(config.CLICKHOUSE_URL, { cluster: config.CLICKHOUSE_CLUSTER })
    : new EmbeddedEventStore(join(config.DATA_DIR, 'events.sqlite'), { readOffThread: options.reads === true })
}
