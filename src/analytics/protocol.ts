// Messages between the serving thread and an analytics thread (threads.ts ↔ worker.ts).
import type { Config } from '../config'
import type { ErrorBody } from '../http/errors'
import type { MetricCall } from './metrics-relay'

export type ToAnalytics =
  | { type: 'init'; config: Config }
  /** `deadline`: Date.now() past which the work is cancelled (the threads' performance clocks differ) */
  /** `gzip`: the answer is sent compressed (the client accepts it) */
  | { type: 'call'; id: number; op: string; args: unknown; deadline: number; gzip: boolean }
  | { type: 'cancel'; id: number }
  | { type: 'close' }

export type FromAnalytics =
  | { type: 'ready' }
  | { type: 'fatal'; message: string; stack?: string }
  /** the finished answer: its JSON, encoded (and gzipped when asked), the buffer transferred (not copied) */
  | { type: 'answer'; id: number; bytes: Uint8Array; gzip: boolean; contentType?: string }
  | { type: 'error'; id: number; status: number; body: ErrorBody; headers: Record<string, string> }
  | { type: 'metrics'; calls: MetricCall[] }
  | { type: 'closed' }
