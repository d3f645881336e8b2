// `dlq replay` for events the learner dead-lettered: the same Learner the flush worker runs, on its own
// connection, fed the dead-lettered rows as a batch.
import type { Config } from '../config'
import { openDatabase } from '../db/postgres'
import { definitionCaps } from '../definitions/capped-writes'
import { DefinitionTracker } from '../definitions/tracker'
import type { StoredEvent } from '../events/store'
import { createLogger } from '../log'
import type { Batch } from '../pipeline/consumer'
import type { LearnerReplay } from '../pipeline/dlq-cli'
import { MetricsRecorder } from '../pipeline/metrics-relay'
import type { LoggedRecord } from '../pipeline/ring'
import { Learner } from './learner'

function batchOf(rows: StoredEvent[]): Batch {
  const records: LoggedRecord[] = rows.map((row) => ({
    seq: 0,
    projectId: row.teamId,
    receivedAt: row.createdAt,
    events: [{ uuid: row.uuid, event: row.event, distinctId: row.distinctId, properties: JSON.parse(row.properties), timestamp: row.timestamp }],
    dropped: new Map(),
    size: 0,
    decodedSize: 0,
  }))
  return { records, firstSeq: 0, lastSeq: 0, events: rows.length, items: rows.length, bytes: 0 }
}

export async function openLearnerReplay(config: Config): Promise<LearnerReplay> {
  const db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, poolMax: 2, joinRunningServer: true })
  const log = createLogger(config.LOG_LEVEL)
  const metrics = new MetricsRecorder()
  const caps = definitionCaps(db.sql, { events: config.MAX_EVENT_DEFINITIONS, properties: config.MAX_PROPERTY_DEFINITIONS }, { metrics, log })
  const learner = new Learner({ sql: db.sql, tracker: new DefinitionTracker(), caps, metrics, log })
  return {
    learn: (rows) => learner.handle(batchOf(rows)),
    close: () => db.close(),
  }
}
