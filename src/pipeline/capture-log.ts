// The capture thread's side of the pipeline: accepted requests go to the write-ahead log (and nothing else
// happens on the request path); a flush worker thread reads the log, writes the stores and reports back.
// Capture answers 200 only after accept()'s promise resolved: the record is in the log, written by the log's
// group-commit writer (and, with WAL_FSYNC_INTERVAL_MS=0, on stable storage).
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { decodeRecord, parseRequest } from '../capture/record'
import { errors } from '../http/errors'
import type { Logger } from '../log'
import type { Metrics } from '../ops/metrics'
import { Backlog, BacklogRecovery, readSavedBacklog, saveBacklog, saveBacklogNow } from './backlog'
import { Checkpoint } from './checkpoint'
import { PendingBytes } from './pending-bytes'
import { ProjectShares } from './project-shares'
import type { Progress } from './flusher'
import { applyDeltas, type MetricDeltas } from './metrics-relay'
import { SharedCounters } from './shared-counters'
import { WalWriteError, WriteAheadLog } from './wal'
import type { WalRecord } from './wal-reader'
import type { CaptureLogStats, ConsumerState, FromWorker, ToWorker, WorkerInit } from './capture-log-messages'

export type { CaptureLogStats, ConsumerState, FromWorker, ToWorker, WorkerInit } from './capture-log-messages'

export interface CaptureLogOptions {
  dataDir: string
  segmentBytes: number
  fsyncIntervalMs: number
  maxWalBytes: number
  /** unflushed bytes one project may have in the log (WAL_PROJECT_SHARE of maxWalBytes); past it, 429 for that project */
  projectShareBytes?: number
  /** the flush worker's entry module and what it needs to start */
  worker: { url: URL; data: Record<string, unknown> }
  /**
   * The names of the flush worker's consumers. One the checkpoint does not name has finished nothing yet (a store
   * down since the log began): what a previous process left is counted from the oldest record it has to do.
   */
  consumers: readonly string[]
}

const RESTART_DELAY_MS = 1000
/** How often the backlog's tally is saved beside the log (while it changes) */
const BACKLOG_SAVE_MS = 1000
/**
 * The bound a logged request was decoded within when capture took it: a replayed one is not checked again (it was
 * accepted), this only keeps the decoder's own expansion caps from refusing it.
 */
const ACCEPTED_BODY_BYTES = Number.MAX_SAFE_INTEGER

/** The events a logged request carries (capture's count when it took it); 0 if it no longer decodes (dead-lettered). */
function itemsOf(record: WalRecord): number {
  try {
    const { request, deep, kind } = decodeRecord(record.payload)
    // a session recording carries no events (the recording writer alone reads it)
    if (kind === 'recording') return 0
    return parseRequest(request, ACCEPTED_BODY_BYTES, deep).items.length
  } catch {
    return 0
  }
}

export class CaptureLog {
  readonly wal: WriteAheadLog
  readonly counters = new SharedCounters()
  private readonly walDir: string
  private worker: Worker | null = null
  private progress: Progress | null = null
  /** the bytes and events of the records not every consumer has finished, released by position */
  private readonly backlog: Backlog
  private readonly backlogPath: string
  private backlogSaving: Promise<void> | null = null
  private readonly backlogTimer: ReturnType<typeof setInterval>
  private accepting = true
  private closed = false
  private draining: ((caughtUp: boolean) => void) | null = null
  private ready: Promise<void> | null = null
  private lastRefusalLogged = 0
  /** each project's unflushed bytes, against its share of the log (lagging the consumers by 1/256 of the log at most) */
  readonly shares: ProjectShares
  private readonly shareRefusalLogged = new Map<number, number>()
  /** per consumer: since when it has had work waiting without moving (absent when caught up) */
  private readonly behindSince = new Map<string, number>()
  /** backups copying the log's segments: while any runs, none is released (recycled) under it */
  private segmentHolds = 0
  /** records accepted and handed to the log's writer, not yet written: counted against the cap and the shares */
  private readonly pending = new PendingBytes()
  /** the writer's groups as last counted in the metrics */
  private groupsCounted = { groups: 0, records: 0 }

  constructor(
    private readonly options: CaptureLogOptions,
    private readonly deps: { log: Logger; metrics: Metrics; onNotice?(notice: unknown): void },
  ) {
    this.shares = new ProjectShares(Math.max(4096, Math.floor(options.maxWalBytes / 256)))
    this.backlog = new Backlog(Math.max(4096, Math.floor(options.maxWalBytes / 256)))
    this.walDir = join(options.dataDir, 'wal')
    this.backlogPath = join(this.walDir, 'backlog')
    mkdirSync(this.walDir, { recursive: true })
    this.wal = WriteAheadLog.open({
      dir: this.walDir,
      segmentBytes: options.segmentBytes,
      fsyncIntervalMs: options.fsyncIntervalMs,
      onSegmentsChanged: () => this.post({ type: 'segments', segments: this.wal.snapshot() }),
    })
    const done = Checkpoint.read(join(this.walDir, 'checkpoint')).done
    // The log may have been emptied while the checkpoint kept its place (e.g. its files were moved away): new
    // records come after everything any consumer has finished, or the one furthest ahead would skip them.
    const furthest = Math.max(0, ...Object.values(done))
    if (furthest > 0) this.wal.startAt(furthest + 1)
    // what a previous process left unfinished still counts against its projects' shares, and as the backlog: from
    // the oldest record some consumer has not finished (one the checkpoint does not name has finished none)
    const from = Math.max(this.wal.firstSeq, Math.min(...options.consumers.map((name) => done[name] ?? 0)) + 1)
    const recovery = new BacklogRecovery(this.backlog, readSavedBacklog(this.backlogPath), from, itemsOf)
    this.shares.recover(this.wal.reader(from), (record, weight) => recovery.record(record, weight))
    recovery.finish()
    // saved again soon, even if nothing changes: a tally left by another log (its files moved away) must not stay
    this.backlog.dirty = true
    this.publish(0)
    this.backlogTimer = setInterval(() => this.saveBacklog(), BACKLOG_SAVE_MS)
    this.backlogTimer.unref?.()
    // Gauges are read at every scrape: current whether or not the worker is making progress.
    deps.metrics.beforeScrape.push(() => this.updateGauges())
  }

  private publish(items: number): void {
    const extent = this.wal.activeExtent
    this.counters.published(this.wal.lastSeq, extent.firstSeq, extent.size, items)
  }

  private post(message: ToWorker): void {
    this.worker?.postMessage(message)
  }

  /** Start the flush worker and wait until it has opened its stores. */
  start(): Promise<void> {
    this.ready = new Promise<void>((resolve, reject) => this.spawn(resolve, reject))
    return this.ready
  }

  private spawn(resolve?: () => void, reject?: (e: Error) => void): void {
    const worker = new Worker(this.options.worker.url.href)
    this.worker = worker
    worker.onmessage = (event: MessageEvent<FromWorker>) => {
      const m = event.data
      if (m.type === 'ready') {
        this.rebase(m.progress)
        resolve?.()
      } else if (m.type === 'progress') this.onProgress(m.progress)
      else if (m.type === 'metrics') applyDeltas(this.deps.metrics, m.deltas)
      else if (m.type === 'notice') this.deps.onNotice?.(m.notice)
      else if (m.type === 'drained') this.draining?.(m.caughtUp)
      else if (m.type === 'fatal') {
        this.deps.log.error({ error: m.message }, 'flush worker failed')
        reject?.(new Error(m.message))
      }
    }
    worker.onerror = (event) => {
      this.deps.log.error({ error: (event as ErrorEvent).message }, 'flush worker crashed')
    }
    worker.addEventListener('close', () => {
      if (this.worker !== worker) return
      this.worker = null
      if (this.closed || this.draining) return
      // Everything it had not finished is still in the log: a new worker resumes from the checkpoint.
      this.deps.log.warn('flush worker exited; restarting it')
      setTimeout(() => {
        if (!this.closed) this.spawn()
      }, RESTART_DELAY_MS)
    })
    const init: WorkerInit = {
      type: 'init',
      counters: this.counters.buffer,
      segments: this.wal.snapshot(),
      walDir: this.walDir,
      dlqDir: join(this.options.dataDir, 'dlq'),
      data: this.options.worker.data,
    }
    worker.postMessage(init)
  }

  private minPosition(progress: Progress): number {
    const positions = Object.values(progress.positions)
    return positions.length ? Math.min(...positions) : this.wal.lastSeq
  }

  /**
   * A (re)started worker counts each consumer's events from 0 at its checkpoint: what is accepted starts as what
   * the slowest of them has still to do, so that it sees the events waiting (and starts a batch early on them).
   */
  private rebase(progress: Progress): void {
    this.progress = progress
    this.shares.release(this.minPosition(progress))
    this.backlog.release(this.minPosition(progress))
    this.counters.setAccepted(this.backlog.items)
    this.updateGauges()
  }

  private onProgress(progress: Progress): void {
    for (const [name, position] of Object.entries(progress.positions)) {
      if (this.progress?.positions[name] !== position) this.behindSince.delete(name) // it moved: not stuck
    }
    this.progress = progress
    if (this.segmentHolds === 0) this.wal.release(this.minPosition(progress))
    this.shares.release(this.minPosition(progress))
    this.backlog.release(this.minPosition(progress))
    this.updateGauges()
  }

  /**
   * Bytes of records accepted but not yet finished by every consumer, each counted as the larger of its size on
   * disk and what it decodes to (what a previous process left is weighed as its saved tally says, else as cheaply
   * told: a gzip body by its trailer). Released whole runs at a time: it may lag the slowest consumer by one run
   * (WAL_MAX_BYTES / 256 at most), and is 0 once every consumer has caught up.
   */
  backlogBytes(): number {
    return this.backlog.bytes + this.pending.bytes
  }

  /** Save the backlog's tally beside the log when it changed (one write at a time, off the request thread). */
  private saveBacklog(): void {
    if (!this.backlog.dirty || this.backlogSaving || this.closed) return
    this.backlog.dirty = false
    this.backlogSaving = saveBacklog(this.backlogPath, this.backlog.waiting())
      .catch((error) => {
        this.backlog.dirty = true
        this.deps.log.warn({ err: error }, 'write-ahead log: could not save the backlog tally; a restart decodes the records it would have covered')
      })
      .finally(() => {
        this.backlogSaving = null
      })
  }

  /** Each consumer's position, lag and how long it has been behind without moving. */
  consumerStates(now = Date.now()): Record<string, ConsumerState> {
    const states: Record<string, ConsumerState> = {}
    if (!this.progress) return states
    for (const [name, position] of Object.entries(this.progress.positions)) {
      const lag = Math.max(0, this.wal.lastSeq - position)
      let since = this.behindSince.get(name)
      if (lag === 0) this.behindSince.delete(name)
      else if (since === undefined) this.behindSince.set(name, (since = now))
      states[name] = { position, lag, behindMs: lag > 0 && since !== undefined ? now - since : 0, failing: this.progress.failing[name] ?? null, store: this.progress.stores?.[name] }
    }
    return states
  }

  private updateGauges(): void {
    const m = this.deps.metrics
    const groups = this.wal.groupStats
    m.walGroupWrites.inc(groups.groups - this.groupsCounted.groups)
    m.walGroupRecords.inc(groups.records - this.groupsCounted.records)
    this.groupsCounted = groups
    m.walBytes.set(this.backlogBytes())
    m.walEvents.set(this.progress ? this.wal.lastSeq - this.minPosition(this.progress) : this.wal.lastSeq)
    m.walLargestProject.set(this.shares.summary().largest)
    m.ringDepth.set(this.backlog.items)
    for (const [consumer, state] of Object.entries(this.consumerStates())) {
      m.consumerLag.set({ consumer }, state.lag)
      m.consumerBehind.set({ consumer }, state.behindMs / 1000)
    }
  }

  /**
   * Whether capture has room to spare: false from 90% of the cap, so that /_ready turns a load balancer away
   * before clients are refused (appends themselves are refused only past the cap).
   */
  get hasRoom(): boolean {
    return this.backlogBytes() < this.options.maxWalBytes * 0.9
  }

  /**
   * Log an accepted request of `items` events. Throws 503 when the log is over its cap, 429 when the project holds
   * its share of the log; the promise rejects with 503 when the disk refuses the write. In every case nothing was
   * acknowledged and the client retries. The record is written by the log's group-commit writer (wal-group.ts)
   * together with the others waiting; the promise resolves once it is written (and synced, with
   * WAL_FSYNC_INTERVAL_MS=0).
   */
  accept(parts: Uint8Array[], items: number, decodedBytes = 0, projectId?: number): Promise<void> {
    if (!this.accepting) throw errors.unavailable('shutting_down', 'The server is shutting down. Please retry.')
    let size = 16
    for (const p of parts) size += p.length
    // A compressed request counts as what it decodes to: 19 KB of gzip became 19 MB in the store, and a cap on
    // the bytes on disk let 1.9 MB of requests put 2.65 GB there. (It leaves the count by position: backlog.ts.)
    const weight = Math.max(size, decodedBytes)
    if (this.backlogBytes() + weight > this.options.maxWalBytes) {
      this.deps.metrics.requestsRejected.inc({ code: 'capture_backlog_full' })
      throw errors.unavailable('capture_backlog_full', 'Too many events are waiting to be written. Please retry shortly.')
    }
    // the node's fullness first (503 for everybody), then the project's share (429 for it alone)
    if (projectId !== undefined) this.checkShare(projectId, weight)
    // counted as waiting from now: the cap and the shares see the records of a group still being written
    this.pending.add(projectId, weight)
    let waiting = true
    const written = (seq: number) => {
      waiting = false
      this.pending.remove(projectId, weight)
      this.backlog.add(seq, size, weight, items)
      if (projectId !== undefined) this.shares.add(seq, projectId, weight)
      this.publish(items)
    }
    return this.wal.write(parts, written).then(
      () => undefined,
      (error) => {
        if (waiting) this.pending.remove(projectId, weight)
        if (!(error instanceof WalWriteError)) throw error
        // once a second at most: a full disk refuses every request
        const now = Date.now()
        if (now - this.lastRefusalLogged > 1000) {
          this.lastRefusalLogged = now
          this.deps.log.error({ err: error, code: error.code }, 'write-ahead log refused a record')
        }
        this.deps.metrics.requestsRejected.inc({ code: 'log_write_failed' })
        throw errors.unavailable('log_write_failed', 'Unable to store event(s). Please try again.')
      },
    )
  }

  /**
   * Records logged so far are deleted, not recycled, once every consumer has passed them (a person's events were
   * erased from the store: their raw copies must not stay readable in the log). Best effort: if no new segment can
   * be started now, the current one goes when it is full and passed.
   */
  forgetLogged(): void {
    // at once when no group is being written, else between two groups
    this.wal.forgetLogged().then(
      () => {
        // consumers that already passed everything report no progress until new records come: release now
        if (this.progress && this.segmentHolds === 0 && !this.closed) this.wal.release(this.minPosition(this.progress))
      },
      (error) => this.deps.log.warn({ err: error }, 'write-ahead log: could not start a new segment after an erasure; the current one is deleted once full and consumed'),
    )
  }

  /**
   * 429 when the project's unflushed bytes would pass its share of the log: the other projects keep their room
   * (and /_ready stays about the node). A project's request larger than the whole share still goes in alone.
   */
  private checkShare(projectId: number, weight: number): void {
    const share = this.options.projectShareBytes
    if (share === undefined) return
    const held = this.shares.bytesOf(projectId) + this.pending.bytesOf(projectId)
    if (held === 0 || held + weight <= share) return
    this.deps.metrics.requestsRejected.inc({ code: 'project_log_share' })
    const now = Date.now()
    if (now - (this.shareRefusalLogged.get(projectId) ?? 0) > 60_000) {
      this.shareRefusalLogged.set(projectId, now)
      if (this.shareRefusalLogged.size > 10_000) this.shareRefusalLogged.delete(this.shareRefusalLogged.keys().next().value!)
      this.deps.log.warn({ projectId, unflushedBytes: held, shareBytes: share }, 'capture refused for a project over its share of the write-ahead log (429)')
    }
    throw errors.rateLimited('Too many events of this project are waiting to be written. Please retry shortly.')
  }

  /**
   * Keep every segment the log holds now until the answer is called (a backup copies them after the stores: a
   * record the consumers finish meanwhile must still be in the copy). The log may grow past its cap meanwhile only by
   * what capture accepts; capture's own cap is by backlog, which this does not change.
   */
  holdSegments(): () => void {
    this.segmentHolds++
    let released = false
    return () => {
      if (released) return
      released = true
      this.segmentHolds--
      if (this.segmentHolds === 0 && this.progress && !this.closed) this.wal.release(this.minPosition(this.progress))
    }
  }

  /** Pass a notice to the flush worker's consumers (e.g. persons erased: the learner forgets their ids). */
  tell(notice: unknown): void {
    this.post({ type: 'notice', notice })
  }

  /**
   * Wait until these consumers (those of them this log has) have stored every record accepted before this call
   * (e.g. the event-store writers, before events are erased from the store); false when `timeoutMs` passes first.
   */
  async caughtUp(consumers: string[], timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    // records handed to the log's writer before this call are written first (or refused)
    await this.wal.settled()
    const target = this.wal.lastSeq
    const behind = () => !this.progress || consumers.some((c) => (this.progress!.positions[c] ?? target) < target)
    while (behind()) {
      if (Date.now() >= deadline || this.closed) return false
      await Bun.sleep(10)
    }
    return true
  }

  stats(): CaptureLogStats {
    return {
      lastSeq: this.wal.lastSeq,
      backlogRecords: this.progress ? this.wal.lastSeq - this.minPosition(this.progress) : this.wal.lastSeq,
      backlogBytes: this.backlogBytes(),
      waitingEvents: this.backlog.items,
      consumers: this.consumerStates(),
    }
  }

  /** Stop accepting, let the worker catch up (until the deadline), and close. */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.closed) return false
    this.accepting = false
    // requests accepted before are written (and answered) first: the worker drains what the log holds
    await this.wal.settled()
    let caughtUp = false
    if (this.worker) {
      const done = new Promise<boolean>((resolve) => (this.draining = resolve))
      this.post({ type: 'drain', deadline: Date.now() + timeoutMs })
      caughtUp = await Promise.race([done, Bun.sleep(timeoutMs + 2000).then(() => false)])
    }
    await this.close()
    if (!caughtUp) {
      const stats = this.stats()
      // the store that kept the drain from finishing, named in the line an operator reads at exit
      const failing = Object.values(stats.consumers).filter((c) => c.failing !== null)
      const stores = [...new Set(failing.map((c) => c.store ?? 'unknown'))]
      this.deps.log.warn(
        { ...stats, failingStores: stores, failing: failing.map((c) => c.failing) },
        `drain incomplete${stores.length ? ` (${stores.join(', ')} failing: ${failing.map((c) => c.failing).join('; ')})` : ''}; the rest stays in the log for the next start`,
      )
    }
    return caughtUp
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.accepting = false
    clearInterval(this.backlogTimer)
    const worker = this.worker
    this.worker = null
    worker?.terminate()
    await this.wal.close()
    await this.backlogSaving
    try {
      // what is still waiting, as this process last heard from the consumers (nothing, after a full drain)
      saveBacklogNow(this.backlogPath, this.backlog.waiting())
    } catch (error) {
      this.deps.log.warn({ err: error }, 'write-ahead log: could not save the backlog tally; the next start decodes what it replays to count it')
    }
  }
}
