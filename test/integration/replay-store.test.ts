// The recording stores, embedded (SQLite in DATA_DIR) and ClickHouse 18.16, against their contract.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { ClickHouseRecordingStore } from '../../src/replay/clickhouse-store'
import { SqliteRecordingStore } from '../../src/replay/sqlite-store'
import { freshEnv } from '../helpers/stack'
import { recordingStoreContract } from './replay-store.contract'

recordingStoreContract('embedded', async () => {
  const store = new SqliteRecordingStore(join(mkdtempSync(join(tmpdir(), 'phog-rec-')), 'recordings.sqlite'))
  await store.init()
  return store
})

recordingStoreContract('ClickHouse 18.16', async () => {
  const env = await freshEnv({ postgres: 'embedded', clickhouse: 'real' })
  const events = new ClickHouseEventStore(env.CLICKHOUSE_URL) // its migrations make the table
  await events.init()
  await events.close()
  const store = new ClickHouseRecordingStore(env.CLICKHOUSE_URL)
  await store.init()
  return store
})
