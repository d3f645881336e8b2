// The flush worker's consumer of session recordings: a logged /s/ request (a record of kind `recording`, which the
// event store writer and the learner see as carrying no events) is decoded again here and its sessions' blocks are
// stored. Each block's id is its record's sequence number and its position there: a batch written again after a
// crash (the cursor had not moved yet) adds nothing twice.
import type { CaptureRequest } from '../capture/record'
import type { Logger } from '../log'
import type { Batch, BatchHandler } from '../pipeline/consumer'
import { connectionFailure } from '../pipeline/failure-reason'
import type { PipelineMetrics } from '../pipeline/metrics-relay'
import { BoundedCounts } from './budget'
import { parseRecordingRequest, type SnapshotBatch } from './decode'
import { blockOf, MAX_CLOCK_AHEAD_MS, MAX_TIMESTAMP_MS } from './metadata'
import type { BlockWrite, RecordingStore } from './store'

export const RECORDING_WRITER = 'recordings'
const keyOf = (w: BlockWrite) => `${w.teamId}\u0000${w.block.sessionId}`
/** Bytes of JSON lines written at a time. */
const WRITE_BYTES = 8 * 1024 * 1024

/** A request's snapshot batches by session, in order (posthog-js sends one or a few sessions per request). */
export function bySession(batches: SnapshotBatch[]): SnapshotBatch[] {
  const sessions = new Map<string, SnapshotBatch>()
  for (const b of batches) {
    const known = sessions.get(b.sessionId)
    if (!known) sessions.set(b.sessionId, { ...b, events: [...b.events] })
    else if (known.windowId === b.windowId) known.events.push(...b.events)
    else sessions.set(`${b.sessionId}\u0000${sessions.size}`, { ...b, events: [...b.events] })
  }
  return [...sessions.values()]
}

/** The blocks a logged recording request becomes (what capture accepted decodes the same way again). */
export function blocksOfRequest(seq: number, projectId: number, request: CaptureRequest, maxBytes: number): BlockWrite[] {
  const parsed = parseRecordingRequest(request, maxBytes)
  const latest = Number.isFinite(request.receivedAt) ? Math.min(MAX_TIMESTAMP_MS, request.receivedAt + MAX_CLOCK_AHEAD_MS) : MAX_TIMESTAMP_MS
  // a $snapshot without rrweb events is no block: empty ones cost a row each and lengthen the session's sources
  return bySession(parsed.batches.filter((b) => b.events.length > 0)).map((batch, i) => ({ teamId: projectId, id: `${seq}-${i}`, block: blockOf(batch, latest) }))
}

/** Sessions whose stored bytes the writer remembers (the least recently written forgotten first, read again). */
const KNOWN_SESSIONS = 100_000
/** Session ids per size lookup. */
const LOOKUP_CHUNK = 1000
/**
 * Failures of one batch, with a store that answers, before its blocks are written one at a time and those the store
 * refuses are dropped (the consumer's rule for events: about 20 s of backoff, longer than a restarting store takes).
 * A logged recording carries no events, so the consumer cannot narrow a refused batch down itself: one block the
 * store would never take held back every later recording, and the log, unable to recycle what they sit in, grew.
 */
const ISOLATE_AFTER_FAILURES = 8

export class RecordingWriter implements BatchHandler {
  readonly name = RECORDING_WRITER
  readonly store = 'recordings'
  /** it drops the blocks its store refuses itself (the consumer could only retry a batch of recordings whole) */
  readonly selfIsolating = true
  /** `team\0session` → bytes stored, for RECORDING_MAX_SESSION_BYTES */
  private readonly stored = new BoundedCounts(KNOWN_SESSIONS)
  /** failures in a row of the batch being written */
  private failures = 0

  constructor(
    private readonly deps: {
      recordings: RecordingStore
      maxBodyBytes: number
      metrics: PipelineMetrics
      log: Logger
      /** RECORDING_MAX_SESSION_BYTES, enforced here on the stored bytes (0 = no cap) */
      maxSessionBytes?: number
      /** ISOLATE_AFTER_FAILURES (tests) */
      isolateAfterFailures?: number
    },
  ) {}

  async handle(batch: Batch): Promise<void> {
    const touched = new Set<string>()
    try {
      await this.writeBatch(batch, touched, false)
      this.failures = 0
    } catch (error) {
      // what this attempt counted against the session cap is read from the store again next time
      for (const key of touched) this.stored.delete(key)
      touched.clear()
      this.failures++
      if (connectionFailure(error) !== null || this.failures < (this.deps.isolateAfterFailures ?? ISOLATE_AFTER_FAILURES)) throw error
      if (!(await this.deps.recordings.health())) throw error
      try {
        await this.writeBatch(batch, touched, true)
      } catch (again) {
        for (const key of touched) this.stored.delete(key)
        throw again
      }
      this.failures = 0
    }
  }

  private async writeBatch(batch: Batch, touched: Set<string>, oneAtATime: boolean): Promise<void> {
    const write = async (writes: BlockWrite[]) => {
      const kept = await this.withinSessionCap(writes)
      for (const w of kept) touched.add(keyOf(w))
      if (oneAtATime) await this.writeEach(kept)
      else await this.deps.recordings.write(kept)
    }
    // blocks are written WRITE_BYTES at a time: many small requests make one insert (ClickHouse makes a part per
    // insert), and a batch of large recordings never sits decoded in memory at once
    let pending: BlockWrite[] = []
    let pendingBytes = 0
    for (const record of batch.records) {
      if (!record.recording) continue
      let writes: BlockWrite[]
      try {
        writes = blocksOfRequest(record.seq, record.projectId, record.recording as CaptureRequest, this.deps.maxBodyBytes)
      } catch (error) {
        // capture checked it before acknowledging it: only a record written by another version can land here
        this.deps.metrics.inc('deadLettered', { consumer: this.name, reason: 'recording_undecodable' })
        this.deps.log.error({ err: error, seq: record.seq }, 'a logged session recording could not be decoded; skipped')
        continue
      }
      for (const w of writes) {
        pending.push(w)
        pendingBytes += w.block.summary.size
      }
      if (pendingBytes >= WRITE_BYTES) {
        await write(pending)
        pending = []
        pendingBytes = 0
      }
    }
    await write(pending)
  }

  /** Block by block: one the store refuses while it answers is dropped and counted; an outage still throws. */
  private async writeEach(writes: BlockWrite[]): Promise<void> {
    for (const w of writes) {
      try {
        await this.deps.recordings.write([w])
      } catch (error) {
        if (connectionFailure(error) !== null || !(await this.deps.recordings.health())) throw error
        this.stored.delete(keyOf(w))
        this.deps.metrics.inc('deadLettered', { consumer: this.name, reason: 'recording_refused_by_store' })
        this.deps.log.error({ err: error, team: w.teamId, session: w.block.sessionId, block: w.id, bytes: w.block.summary.size }, 'the recording store refused a block; dropped')
      }
    }
  }

  /**
   * The blocks that keep their session within RECORDING_MAX_SESSION_BYTES, by the bytes the store holds: the exact
   * cap behind /s/'s in-memory count (which restarts with the process). A block past it is dropped and counted.
   */
  private async withinSessionCap(writes: BlockWrite[]): Promise<BlockWrite[]> {
    const cap = this.deps.maxSessionBytes ?? 0
    if (cap <= 0 || writes.length === 0) return writes
    const unknown = new Map<number, Set<string>>()
    for (const w of writes) {
      if (!this.stored.has(keyOf(w))) (unknown.get(w.teamId) ?? unknown.set(w.teamId, new Set()).get(w.teamId)!).add(w.block.sessionId)
    }
    for (const [teamId, ids] of unknown) {
      const list = [...ids]
      for (let i = 0; i < list.length; i += LOOKUP_CHUNK) {
        const chunk = list.slice(i, i + LOOKUP_CHUNK)
        const sizes = await this.deps.recordings.sessionSizes(teamId, chunk)
        for (const id of chunk) this.remember(`${teamId}\u0000${id}`, sizes.get(id) ?? 0)
      }
    }
    const kept: BlockWrite[] = []
    for (const w of writes) {
      const key = keyOf(w)
      const size = w.block.summary.size
      const before = this.stored.get(key) ?? 0
      if (before + size > cap) {
        this.deps.metrics.inc('recordingBytesRefused', { reason: 'session_bytes' }, size)
        continue
      }
      this.remember(key, before + size)
      kept.push(w)
    }
    return kept
  }

  private remember(key: string, bytes: number): void {
    this.stored.set(key, bytes)
  }

  probe(): Promise<boolean> {
    return this.deps.recordings.health()
  }
}
