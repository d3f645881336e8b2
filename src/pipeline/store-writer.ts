// The consumer that writes events to the event store: one bounded insert per batch, retry-safe. Rows the
// store rejects for good are isolated by the consumer (isolate.ts) and sent to the dead-letter file.
import type { CapturedEvent } from '../capture/normalize'
import { StoreError, type EventStore, type StoredEvent } from '../events/store'
import type { Logger } from '../log'
import type { Checkpoint } from './checkpoint'
import type { Batch, BatchHandler } from './consumer'
import type { DeadLetters } from './dead-letters'
import type { PipelineMetrics } from './metrics-relay'
import type { LoggedRecord } from './ring'

export const STORE_WRITER = 'store'

function propertiesText(e: CapturedEvent, added?: object): string | null {
  try {
    return JSON.stringify(added ? { ...e.properties, ...added } : e.properties)
  } catch {
    return null // nested beyond what the serializer can walk
  }
}

/** The row an event becomes in the event store (and in a dead letter). */
export function storedEventOf(record: LoggedRecord, e: CapturedEvent, properties = propertiesText(e)): StoredEvent {
  return {
    uuid: e.uuid,
    teamId: record.projectId,
    event: e.event,
    distinctId: e.distinctId,
    properties: properties ?? '{}',
    timestamp: e.timestamp,
    createdAt: record.receivedAt,
    personId: null,
  }
}

/** What a consumer writing to the event store needs. */
export interface EventWriterDeps {
  events: EventStore
  checkpoint: Checkpoint
  deadLetters: DeadLetters
  metrics: PipelineMetrics
  log: Logger
  /** properties the stored row gets beside the event's own (an exception's fingerprint and issue: error-tracking/enricher.ts) */
  enrich?(projectId: number, e: CapturedEvent): object | undefined
}

/** The row's properties as JSON, with what `enrich` adds (null: not serialisable). */
export function rowPropertiesText(deps: Pick<EventWriterDeps, 'enrich'>, record: LoggedRecord, e: CapturedEvent): string | null {
  return propertiesText(e, deps.enrich?.(record.projectId, e))
}

export class StoreWriter implements BatchHandler {
  readonly name = STORE_WRITER

  get store(): string {
    return this.deps.events.kind
  }

  constructor(
    private readonly deps: EventWriterDeps & {
      /** events another consumer writes (history-writer.ts: those of other months) */
      skip?(record: LoggedRecord, e: CapturedEvent): boolean
    },
  ) {}

  async handle(batch: Batch, inDoubt: boolean): Promise<void> {
    const rows: StoredEvent[] = []
    const unserializable: StoredEvent[] = []
    const skip = this.deps.skip
    for (const record of batch.records) {
      for (const e of record.events) {
        if (skip?.(record, e)) continue
        const properties = rowPropertiesText(this.deps, record, e)
        const row = storedEventOf(record, e, properties)
        if (properties === null) unserializable.push(row)
        else rows.push(row)
      }
    }
    if (unserializable.length > 0) this.deadLetter(unserializable, 'unserializable_properties', 'properties could not be serialised')

    // Before the insert, record that rows up to lastSeq may land: a crash before the cursor moves then
    // replays this batch as in doubt, reconciled by uuid instead of inserted twice.
    if (this.deps.checkpoint.attempting(this.name) < batch.lastSeq) {
      this.deps.checkpoint.update((s) => {
        s.attempting[this.name] = batch.lastSeq
      })
    }
    const started = performance.now()
    const written = await this.insert(rows, inDoubt)
    const { metrics } = this.deps
    metrics.observe('flushDuration', (performance.now() - started) / 1000)
    metrics.observe('flushBatchSize', rows.length)
    metrics.inc('flushedEvents', undefined, written)
    // Outcomes are counted here, once per event, however often a record was decoded. A first attempt that
    // wrote fewer rows than it gave met uuids stored long before (outside the window of recent-uuids.ts).
    const alreadyStored = inDoubt ? 0 : rows.length - written
    metrics.inc('events', { outcome: 'accepted' }, rows.length - alreadyStored + unserializable.length)
    const dropped = new Map<string, number>()
    if (alreadyStored > 0) dropped.set('duplicate_uuid', alreadyStored)
    for (const record of batch.records) for (const [reason, n] of record.dropped) dropped.set(reason, (dropped.get(reason) ?? 0) + n)
    for (const [reason, n] of dropped) metrics.inc('events', { outcome: `dropped_${reason}` }, n)
  }

  private async insert(rows: StoredEvent[], inDoubt: boolean): Promise<number> {
    if (rows.length === 0) return 0
    return this.deps.events.insertBatch(rows, { inDoubt })
  }

  probe(): Promise<boolean> {
    return this.deps.events.health()
  }

  /** The store said the rows themselves are wrong (a parse or constraint error), not that it is unavailable. */
  rejects(error: unknown): boolean {
    return error instanceof StoreError && !error.transient
  }

  private deadLetter(rows: StoredEvent[], reason: string, message: string): void {
    this.deps.deadLetters.write(rows, reason, message, this.name)
    this.deps.metrics.inc('deadLettered', { consumer: this.name, reason }, rows.length)
    this.deps.log.error({ reason, events: rows.length, error: message }, 'events dead-lettered')
  }
}
