// What the capture log and its flush worker tell each other, and what the log reports of itself (capture-log.ts).
import type { Progress } from './flusher'
import type { MetricDeltas } from './metrics-relay'
import type { Segment } from './wal-reader'

/** What the worker is told at start. */
export interface WorkerInit {
  type: 'init'
  counters: SharedArrayBuffer
  segments: Segment[]
  walDir: string
  dlqDir: string
  data: Record<string, unknown>
}

export type ToWorker =
  | WorkerInit
  | { type: 'segments'; segments: Segment[] }
  | { type: 'drain'; deadline: number }
  /** something the request thread learned that a consumer needs (opaque to the pipeline) */
  | { type: 'notice'; notice: unknown }

export type FromWorker =
  | { type: 'ready'; progress: Progress }
  | { type: 'progress'; progress: Progress }
  | { type: 'metrics'; deltas: MetricDeltas }
  /** something a consumer learned that the request thread's caches need (opaque to the pipeline) */
  | { type: 'notice'; notice: unknown }
  | { type: 'drained'; caughtUp: boolean }
  | { type: 'fatal'; message: string }

export interface CaptureLogStats {
  lastSeq: number
  backlogRecords: number
  backlogBytes: number
  waitingEvents: number
  consumers: Record<string, ConsumerState>
}

export interface ConsumerState {
  position: number
  /** records in the log this consumer has not finished */
  lag: number
  /** how long it has had work without finishing any (0 when caught up) */
  behindMs: number
  failing: string | null
  /** the store it writes to */
  store?: string
}
