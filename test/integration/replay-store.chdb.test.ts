// The recording store on the modern ClickHouse engine (chDB, ClickHouse 26.7 in-process; test/helpers/chdb.ts):
// the same contract as on 18.16, with lightweight deletes and the modern schema (ZSTD, DateTime64).
import { ClickHouseEventStore } from '../../src/events/clickhouse'
import { ClickHouseRecordingStore } from '../../src/replay/clickhouse-store'
import { chdbClient, chdbUrl, describeWithChdb } from '../helpers/chdb'
import { recordingStoreContract } from './replay-store.contract'

describeWithChdb('session recordings on chDB', () => {
  recordingStoreContract('chDB (ClickHouse 26.7)', async () => {
    const url = chdbUrl(`replay_${crypto.randomUUID().slice(0, 8)}`)
    const events = new ClickHouseEventStore(url, { client: chdbClient() }) // its migrations make the table
    await events.init()
    const store = new ClickHouseRecordingStore(url, { client: chdbClient() })
    await store.init()
    return store
  })
})
