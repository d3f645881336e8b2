// The flush worker's consumer of session recordings: a logged /s/ request (a record of kind `recording`, which the
// event store writer and the learner see as carrying no events) is decoded again here and its sessions' blocks are
// stored. Each block's id is its record's sequence number and its position there: a batch written again after a
// crash (the cursor had not moved yet) adds nothing twice.
import type { CaptureRequest } from '../capture/record'
import type { Logger } from '../log'
import type { Batch, BatchHandler } from '../pipeline/consumer'
import type { PipelineMetrics } from '../pipeline/metrics-relay'
import { parseRecordingRequest, type SnapshotBatch } from './decode'
import { blockOf } from './metadata'
import type { BlockWrite, RecordingStore } from './store'

export const RECORDING_WRITER = 'recordings'
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
  return bySession(parsed.batches).map((batch, i) => ({ teamId: projectId, id: `${seq}-${i}`, block: blockOf(batch) }))
}

export class RecordingWriter implements BatchHandler {
  readonly name = RECORDING_WRITER
  readonly store = 'recordings'

  constructor(
    private readonly deps: { recordings: RecordingStore; maxBodyBytes: number; metrics: PipelineMetrics; log: Logger },
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
        await this.deps.recordings.write(pending)
        pending = []
        pendingBytes = 0
      }
    }
    await this.deps.recordings.write(pending)
  }

  probe(): Promise<boolean> {
    return this.deps.recordings.health()
  }
}
