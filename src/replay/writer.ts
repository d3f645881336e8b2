// The flush worker's consumer of session recordings: a logged /s/ request (a record of kind `recording`, which the
// event store writer and the learner see as carrying no events) is decoded again here and its sessions' blocks are
// stored. Each block's id is its record's sequence number and its position there: a batch written again after a
// crash (the cursor had not moved yet) adds nothing twice.
import type { CaptureRequest } from '../capture/record'
import type { Logger } from '../log'
import type { Batch, BatchHandler } from '../pipeline/consumer'
import type { PipelineMetrics } from '../pipeline/metrics-relay'
import { BoundedCounts } from './budget'
import { parseRecordingRequest, type SnapshotBatch } from './decode'
import { blockOf } from './metadata'
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
  // a $snapshot without rrweb events is no block: empty ones cost a row each and lengthen the session's sources
  return bySession(parsed.batches.filter((b) => b.events.length > 0)).map((batch, i) => ({ teamId: projectId, id: `${seq}-${i}`, block: blockOf(batch) }))
}

/** Sessions whose stored bytes the writer remembers (the least recently written forgotten first, read again). */
const KNOWN_SESSIONS = 100_000
/** Session ids per size lookup. */
const LOOKUP_CHUNK = 1000

export class RecordingWriter implements BatchHandler {
  readonly name = RECORDING_WRITER
  readonly store = 'recordings'
  /** `team\0session` → bytes stored, for RECORDING_MAX_SESSION_BYTES */
  private readonly stored = new BoundedCounts(KNOWN_SESSIONS)

  constructor(
    private readonly deps: {
      recordings: RecordingStore
      maxBodyBytes: number
      metrics: PipelineMetrics
      log: Logger
      /** RECORDING_MAX_SESSION_BYTES, enforced here on the stored bytes (0 = no cap) */
      maxSessionBytes?: number
    },
  ) {}

  async handle(batch: Batch): Promise<void> {
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
        await this.deps.recordings.write(await this.withinSessionCap(pending))
        pending = []
        pendingBytes = 0
      }
    }
    await this.deps.recordings.write(await this.withinSessionCap(pending))
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
