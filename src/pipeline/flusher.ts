// The flush worker's side of the pipeline: consumers reading the log the capture thread writes, each from
// its own durable cursor, and what the capture thread needs to hear back (progress, metrics).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from '../log'
import { Checkpoint } from './checkpoint'
import { Consumer, type BatchHandler } from './consumer'
import { DeadLetters } from './dead-letters'
import type { BatchEvent } from './isolate'
import { storedEventOf } from './store-writer'
import type { PipelineMetrics } from './metrics-relay'
import { Ring, type LoggedRecord } from './ring'
import type { SharedCounters } from './shared-counters'
import type { WalRecord } from './wal-reader'
import type { WalView } from './wal-view'

export interface FlusherOptions {
  walDir: string
  dlqDir: string
  flushIntervalMs: number
  /** start a batch as soon as this many events wait */
  flushMaxEvents: number
  /** the largest batch (default flushMaxEvents): a store may want smaller ones than the trigger */
  batchMaxEvents?: number
  ringMaxEvents: number
  /** how often the shared counters are checked for a full batch waiting */
  pollMs: number
  /** how often an ongoing outage is summarised in the log (default a minute) */
  outageSummaryMs?: number
}

export interface Progress {
  positions: Record<string, number>
  consumedItems: Record<string, number>
  failing: Record<string, string | null>
  /** the store each consumer writes to */
  stores: Record<string, string>
  ringEvents: number
}

export class Flusher {
  readonly checkpoint: Checkpoint
  readonly ring: Ring
  readonly deadLetters: DeadLetters
  private readonly consumers: Consumer[] = []
  private poller: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly options: FlusherOptions,
    private readonly deps: {
      view: WalView
      counters: SharedCounters
      log: Logger
      metrics: PipelineMetrics
      replay(record: WalRecord): LoggedRecord
      onProgress(progress: Progress): void
    },
  ) {
    this.checkpoint = new Checkpoint(join(options.walDir, 'checkpoint'))
    this.ring = new Ring(options.ringMaxEvents)
    this.deadLetters = new DeadLetters(options.dlqDir)
  }

  /** Add a consumer: it reads the log from its own cursor, whatever the others do. */
  addConsumer(handler: BatchHandler): Consumer {
    const consumer = new Consumer(
      {
        wal: this.deps.view,
        ring: this.ring,
        checkpoint: this.checkpoint,
        replay: (record) => this.replay(record),
        maxEvents: Math.min(this.options.flushMaxEvents, this.options.batchMaxEvents ?? Number.POSITIVE_INFINITY),
        intervalMs: this.options.flushIntervalMs,
        log: this.deps.log,
        onFailure: (consumer, reason) => {
          this.deps.metrics.inc('flushFailures', { consumer, reason })
          // the capture thread learns what is failing now, not at the next success (its exit log names it)
          queueMicrotask(() => this.deps.onProgress(this.progress()))
        },
        waitingEvents: (consumedItems) => {
          this.deps.counters.sync()
          return Math.max(0, this.deps.counters.acceptedItems - consumedItems)
        },
        outageSummaryMs: this.options.outageSummaryMs,
        poison: (consumer, events, reason, error) => this.poison(consumer, events, reason, error),
        onProgress: () => this.progressed(),
      },
      handler,
    )
    this.consumers.push(consumer)
    return consumer
  }

  start(): void {
    const pending = this.deps.view.lastSeq - this.minPosition()
    if (pending > 0) this.deps.log.info({ records: pending }, 'replaying the write-ahead log')
    for (const c of this.consumers) c.start()
    this.poller = setInterval(() => this.poll(), this.options.pollMs)
  }

  /** Start a batch early when enough events are waiting, instead of at the next interval. */
  private poll(): void {
    this.deps.counters.sync()
    const accepted = this.deps.counters.acceptedItems
    for (const c of this.consumers) {
      if (accepted - c.consumedItems >= this.options.flushMaxEvents && this.deps.view.lastSeq > c.position) c.kick()
    }
  }

  private minPosition(): number {
    let min = this.deps.view.lastSeq
    for (const c of this.consumers) min = Math.min(min, c.position)
    return min
  }

  /** Events a consumer isolated as poison: dead-lettered in its name, counted, logged with the reason. */
  private poison(consumer: string, events: BatchEvent[], reason: string, error: unknown): void {
    const message = (error as Error)?.message ?? String(error)
    this.deadLetters.write(events.map(({ record, event }) => storedEventOf(record, event)), reason, message, consumer)
    this.deps.metrics.inc('deadLettered', { consumer, reason }, events.length)
    this.deps.log.error({ err: error, consumer, reason, events: events.length, uuids: events.map((e) => e.event.uuid) }, 'events dead-lettered')
  }

  /** A logged request that cannot be interpreted again is kept aside, not lost. */
  private replay(record: WalRecord): LoggedRecord {
    try {
      return this.deps.replay(record)
    } catch (error) {
      mkdirSync(this.deadLetters.dir, { recursive: true })
      writeFileSync(join(this.deadLetters.dir, `raw-${record.seq}.bin`), record.payload)
      this.deps.metrics.inc('deadLettered', { consumer: 'decode', reason: 'replay_failed' })
      this.deps.log.error({ err: error, seq: record.seq }, 'logged request could not be replayed; kept in the dead-letter directory')
      return { seq: record.seq, projectId: 0, receivedAt: 0, events: [], dropped: new Map(), size: record.size, decodedSize: 0 }
    }
  }

  progress(): Progress {
    const p: Progress = { positions: {}, consumedItems: {}, failing: {}, stores: {}, ringEvents: this.ring.eventCount }
    for (const c of this.consumers) {
      // what the log may release: a consumer holding rows (history-writer.ts) is not done with their records
      p.positions[c.name] = c.durablePosition
      p.consumedItems[c.name] = c.consumedItems
      p.failing[c.name] = c.failing
      p.stores[c.name] = c.store
    }
    return p
  }

  private progressed(): void {
    this.ring.evictThrough(this.minPosition())
    this.deps.onProgress(this.progress())
  }

  /** Catch up with the log (until the deadline), then stop. */
  async drain(deadline: number): Promise<boolean> {
    clearInterval(this.poller)
    let caughtUp = true
    for (const c of this.consumers) caughtUp = (await c.catchUp(deadline)) && caughtUp
    await this.close()
    return caughtUp
  }

  async close(): Promise<void> {
    clearInterval(this.poller)
    for (const c of this.consumers) await c.stop()
    this.checkpoint.close()
  }
}
