// Accepted requests → the write-ahead log (+ the ring) → consumers (store writer, learners).
// Capture answers 200 only after `accept` returned: the record is in the log (and, with
// WAL_FSYNC_INTERVAL_MS=0, on stable storage).
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CapturedEvent } from '../capture/normalize'
import { ApiError, errors } from '../http/errors'
import type { Logger } from '../log'
import type { Metrics } from '../ops/metrics'
import { Checkpoint } from './checkpoint'
import { Consumer, type BatchHandler } from './consumer'
import { DeadLetters } from './dead-letters'
import { Ring, type LoggedRecord } from './ring'
import { WalWriteError, WriteAheadLog, type WalRecord } from './wal'

export interface PipelineOptions {
  dataDir: string
  segmentBytes: number
  fsyncIntervalMs: number
  maxWalBytes: number
  ringMaxEvents: number
  flushIntervalMs: number
  flushMaxEvents: number
}

export interface PipelineDeps {
  log: Logger
  metrics: Metrics
  /** turn a logged payload back into events (capture's replay) */
  replay(record: WalRecord): LoggedRecord
}

export interface PipelineStats {
  lastSeq: number
  backlogRecords: number
  backlogBytes: number
  ringEvents: number
  consumers: Record<string, { position: number; failing: string | null }>
}

export class Pipeline {
  readonly wal: WriteAheadLog
  readonly ring: Ring
  readonly checkpoint: Checkpoint
  readonly deadLetters: DeadLetters
  private readonly consumers: Consumer[] = []
  /** bytes in the log not yet finished by every consumer, as of boot */
  private backlogAtBoot = 0
  private appendedBytes = 0
  private accepting = true
  private started = false
  private closed = false

  constructor(
    private readonly options: PipelineOptions,
    private readonly deps: PipelineDeps,
  ) {
    const dir = join(options.dataDir, 'wal')
    mkdirSync(dir, { recursive: true })
    this.wal = WriteAheadLog.open({ dir, segmentBytes: options.segmentBytes, fsyncIntervalMs: options.fsyncIntervalMs })
    this.checkpoint = new Checkpoint(join(dir, 'checkpoint'))
    this.ring = new Ring(options.ringMaxEvents)
    this.deadLetters = new DeadLetters(join(options.dataDir, 'dlq'))
    // The log may have been emptied while the checkpoint kept its place (e.g. the files were moved).
    const done = Object.values(this.checkpoint.get().done)
    if (done.length > 0) this.wal.startAt(Math.min(...done) + 1)
  }

  /** Add a consumer; it resumes from its checkpoint. Call before start(). */
  addConsumer(handler: BatchHandler): Consumer {
    const consumer = new Consumer(
      {
        wal: this.wal,
        ring: this.ring,
        checkpoint: this.checkpoint,
        replay: (record) => this.replay(record),
        maxEvents: this.options.flushMaxEvents,
        intervalMs: this.options.flushIntervalMs,
        log: this.deps.log,
        onFailure: () => this.deps.metrics.flushFailures.inc(),
        onProgress: () => this.progressed(),
      },
      handler,
    )
    this.consumers.push(consumer)
    return consumer
  }

  start(): void {
    this.started = true
    this.backlogAtBoot = this.wal.bytesAfter(this.minPosition())
    const pending = this.wal.lastSeq - this.minPosition()
    if (pending > 0) this.deps.log.info({ records: pending, bytes: this.backlogAtBoot }, 'replaying the write-ahead log')
    for (const c of this.consumers) c.start()
  }

  private minPosition(): number {
    let min = this.wal.lastSeq
    for (const c of this.consumers) min = Math.min(min, c.position)
    return min
  }

  /** A record read back from the log that cannot be interpreted again is kept aside, not lost. */
  private replay(record: WalRecord): LoggedRecord {
    try {
      return this.deps.replay(record)
    } catch (error) {
      const dir = this.deadLetters.dir
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, `raw-${record.seq}.bin`), record.payload)
      this.deps.metrics.deadLettered.inc({ reason: 'replay_failed' })
      this.deps.log.error({ err: error, seq: record.seq }, 'logged request could not be replayed; kept in the dead-letter directory')
      return { seq: record.seq, projectId: 0, receivedAt: 0, events: [], size: record.size }
    }
  }

  private progressed(): void {
    const min = this.minPosition()
    this.ring.evictThrough(min)
    this.wal.release(min)
    this.updateGauges()
  }

  /** Bytes of records accepted but not yet finished by every consumer. */
  backlogBytes(): number {
    let consumed = Infinity
    for (const c of this.consumers) consumed = Math.min(consumed, c.consumedBytes)
    if (!Number.isFinite(consumed)) consumed = 0
    return Math.max(0, this.backlogAtBoot + this.appendedBytes - consumed)
  }

  private updateGauges(): void {
    this.deps.metrics.ringDepth.set(this.ring.eventCount)
    this.deps.metrics.walBytes.set(this.backlogBytes())
    this.deps.metrics.walEvents.set(this.wal.lastSeq - this.minPosition())
  }

  /** Whether capture can take more (the log is under its cap). */
  get hasRoom(): boolean {
    return this.backlogBytes() < this.options.maxWalBytes
  }

  /**
   * Log an accepted request and its events. Throws 503 when the log is over its cap or the disk refuses
   * the write; in both cases nothing was acknowledged and the client retries.
   */
  accept(parts: Uint8Array[], projectId: number, receivedAt: number, events: CapturedEvent[]): Promise<void> | null {
    if (!this.accepting) throw errors.unavailable('shutting_down', 'The server is shutting down. Please retry.')
    let size = 16
    for (const p of parts) size += p.length
    if (this.backlogBytes() + size > this.options.maxWalBytes) {
      throw errors.unavailable('capture_backlog_full', 'Too many events are waiting to be written. Please retry shortly.')
    }
    let appended
    try {
      appended = this.wal.append(parts)
    } catch (error) {
      if (error instanceof WalWriteError) {
        this.deps.log.error({ err: error, code: error.code }, 'write-ahead log refused a record')
        throw errors.unavailable('log_write_failed', 'Unable to store event(s). Please try again.')
      }
      throw error
    }
    this.appendedBytes += appended.size
    this.ring.push({ seq: appended.seq, projectId, receivedAt, events, size: appended.size })
    if (this.ring.eventCount >= this.options.flushMaxEvents) for (const c of this.consumers) c.kick()
    return appended.durable
      ? appended.durable.catch((error) => {
          throw error instanceof ApiError ? error : errors.unavailable('log_write_failed', 'Unable to store event(s). Please try again.')
        })
      : null
  }

  stats(): PipelineStats {
    const consumers: PipelineStats['consumers'] = {}
    for (const c of this.consumers) consumers[c.name] = { position: c.position, failing: c.failing }
    return {
      lastSeq: this.wal.lastSeq,
      backlogRecords: this.wal.lastSeq - this.minPosition(),
      backlogBytes: this.backlogBytes(),
      ringEvents: this.ring.eventCount,
      consumers,
    }
  }

  /** Stop accepting, let the consumers catch up (until the deadline), and close. */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.closed) return false
    this.accepting = false
    const deadline = Date.now() + timeoutMs
    let caughtUp = true
    if (this.started) {
      for (const c of this.consumers) caughtUp = (await c.catchUp(deadline)) && caughtUp
    }
    await this.close()
    if (!caughtUp) this.deps.log.warn(this.stats(), 'drain deadline passed; the rest stays in the log for the next start')
    return caughtUp
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.accepting = false
    for (const c of this.consumers) await c.stop()
    await this.wal.close()
    this.checkpoint.close()
  }
}
