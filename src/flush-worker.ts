// The flush worker thread: reads the write-ahead log the capture thread writes and lands its events in the
// stores. Its own composition root: it opens its own store connections.
import { reniceThisThread } from './lib/renice'
import { RecentUuids } from './pipeline/recent-uuids'
import { replayRecord } from './pipeline/replay'
import type { Config } from './config'
import { createLogger } from './log'
import type { FromWorker, ToWorker, WorkerInit } from './pipeline/capture-log'
import { Flusher } from './pipeline/flusher'
import { MetricsRecorder } from './pipeline/metrics-relay'
import { SharedCounters } from './pipeline/shared-counters'
import { StoreWriter } from './pipeline/store-writer'
import { HistoryWriter, historyApart, isHistorical } from './pipeline/history-writer'
import { WalView } from './pipeline/wal-view'
import { ResilientStore } from './events/resilient-store'
import { openDatabase } from './db/postgres'
import { definitionCaps } from './definitions/capped-writes'
import { DefinitionTracker } from './definitions/tracker'
import { Learner } from './people/learner'
import type { PersonChange } from './people/person-cache'
import { PersonMappingCopy } from './query/person-mapping'
import { createMappingSink } from './query/factory'
import { createEventStore } from './events/factory'
import { EMBEDDED_MAX_BATCH_EVENTS } from './events/embedded'
import { createRecordingStore } from './replay/factory'
import { startRetention } from './replay/retention'
import { RecordingWriter } from './replay/writer'
import { IssueRecorder } from './error-tracking/consumer'
import { ExceptionEnricher } from './error-tracking/enricher'

declare const self: Worker

const send = (message: FromWorker) => self.postMessage(message)

let view: WalView | undefined
let flusher: Flusher | undefined
let shutdown: (() => Promise<void>) | undefined
let learner: Learner | undefined

async function start(init: WorkerInit): Promise<void> {
  const config = init.data.config as Config
  const log = createLogger(config.LOG_LEVEL).child({ thread: 'flush' })
  reniceThisThread(config.FLUSH_WORKER_NICE)
  const counters = new SharedCounters(init.counters)
  view = new WalView(counters)
  view.update(init.segments)
  const events = new ResilientStore(createEventStore(config))
  await events.init()
  const metrics = new MetricsRecorder()
  const recentUuids = new RecentUuids()
  const relay = setInterval(() => {
    const deltas = metrics.take()
    if (deltas) send({ type: 'metrics', deltas })
  }, 200)
  flusher = new Flusher(
    {
      walDir: init.walDir,
      dlqDir: init.dlqDir,
      flushIntervalMs: config.FLUSH_INTERVAL_MS,
      flushMaxEvents: config.FLUSH_MAX_EVENTS,
      batchMaxEvents: events.kind === 'embedded' ? EMBEDDED_MAX_BATCH_EVENTS : undefined,
      ringMaxEvents: config.RING_MAX_EVENTS,
      pollMs: 5,
      outageSummaryMs: config.OUTAGE_LOG_INTERVAL_MS,
    },
    {
      view,
      counters,
      log,
      metrics,
      replay: (record) => recentUuids.filter(replayRecord(record, config.MAX_BODY_BYTES)),
      onProgress: (progress) => send({ type: 'progress', progress }),
    },
  )
  // Its own connection (on the embedded store: through the socket of the PGlite thread, src/db/pglite-thread.ts).
  const db = await openDatabase({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.DATA_DIR,
    poolMax: 2,
    joinRunningServer: true,
    statementTimeoutMs: config.LEARNER_STATEMENT_TIMEOUT_MS,
  })
  // $exception events are fingerprinted as they become rows; their issue ids need no Postgres (error-tracking/enricher.ts)
  const exceptions = new ExceptionEnricher({ sql: db.sql, log })
  exceptions.start()
  const enrich = exceptions.enrich.bind(exceptions)
  // On ClickHouse (a part per month an insert touches) events of other months take their own, slower path.
  const apart = historyApart(events.kind)
  flusher.addConsumer(
    new StoreWriter({ events, checkpoint: flusher.checkpoint, deadLetters: flusher.deadLetters, metrics, log, enrich, skip: apart ? isHistorical : undefined }),
  )
  if (apart) {
    const options = { holdMs: config.HISTORY_HOLD_MS }
    flusher.addConsumer(new HistoryWriter({ events, checkpoint: flusher.checkpoint, deadLetters: flusher.deadLetters, metrics, log, enrich, options }))
  }
  // issues and their fingerprints in Postgres, from the same events
  flusher.addConsumer(new IssueRecorder({ sql: db.sql, enricher: exceptions, maxIssues: config.ERROR_TRACKING_MAX_ISSUES, metrics, log }))
  // Persons, groups and definitions are learned from the log itself, beside the store writer and never after it:
  // /decide must see a person's new properties while ClickHouse is down (the log keeps each record until both
  // consumers have finished it).
  learner = new Learner({
    sql: db.sql,
    tracker: new DefinitionTracker(),
    caps: definitionCaps(db.sql, { events: config.MAX_EVENT_DEFINITIONS, properties: config.MAX_PROPERTY_DEFINITIONS }, { metrics, log }),
    metrics,
    log,
    onPersonsChanged: (change) => send({ type: 'notice', notice: change }),
  })
  flusher.addConsumer(learner)
  // session recordings (/s/): records of their own kind in the same log, stored by a consumer of their own
  const recordings = createRecordingStore(config)
  await recordings.init()
  flusher.addConsumer(new RecordingWriter({ recordings, maxBodyBytes: config.MAX_RECORDING_BODY_BYTES, maxSessionBytes: config.RECORDING_MAX_SESSION_BYTES, metrics, log }))
  const stopRetention = startRetention({ store: recordings, sql: db.sql, defaultDays: config.RECORDING_RETENTION_DAYS, log })
  flusher.start()
  // the distinct id → person mapping, copied where the events are for the query API's person_id
  const personMapping = new PersonMappingCopy(db.sql, createMappingSink(config), log)
  personMapping.start(500)
  shutdown = async () => {
    clearInterval(relay)
    const deltas = metrics.take()
    if (deltas) send({ type: 'metrics', deltas })
    await personMapping.stop()
    exceptions.stop()
    stopRetention()
    await recordings.close()
    await events.close()
    await db.close()
  }
  send({ type: 'ready', progress: flusher.progress() })
}

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const m = event.data
  try {
    if (m.type === 'init') await start(m)
    else if (m.type === 'segments') view?.update(m.segments)
    else if (m.type === 'notice') {
      // persons erased (people/erasure.ts): their distinct ids are not known to have a person any more
      const change = m.notice as PersonChange
      // (teamId -1: the change feed was interrupted, what was erased meanwhile is unknown: forget every project)
      if (change.deleted) learner?.forget(change.teamId < 0 ? undefined : change.teamId, change.all ? undefined : change.distinctIds)
    }
    else if (m.type === 'drain') {
      const caughtUp = flusher ? await flusher.drain(m.deadline) : false
      await shutdown?.()
      send({ type: 'drained', caughtUp })
    }
  } catch (error) {
    send({ type: 'fatal', message: (error as Error)?.stack ?? String(error) })
  }
}
