// Where recordings are kept: per session one metadata row, and the session's blocks of JSON lines (one block per
// logged request and session, compressed). Implemented by the embedded store (sqlite-store.ts).
import type { Block, BlockSummary } from './metadata'

/** A session's metadata: its blocks' summaries folded (their activity bounds only serve the fold). */
export type RecordingRow = Omit<BlockSummary, 'firstActivity' | 'lastActivity'> & {
  teamId: number
  sessionId: string
  distinctId: string
  blockCount: number
  source: string
  library: string | null
}

export interface RecordingListQuery {
  teamId: number
  /** only sessions of these distinct ids (a person's) */
  distinctIds?: string[]
  /** sessions that started at or after / before (ms) */
  dateFrom?: number
  dateTo?: number
  /** recording_duration at least this many seconds */
  minDurationSeconds?: number
  /** the first URL contains this text */
  urlContains?: string
  limit: number
  offset: number
}

export interface BlockInfo {
  firstTimestamp: number
  lastTimestamp: number
  /** bytes of its JSON lines */
  size: number
}

/** A block to store: `id` makes a write repeated after a crash a no-op (the log record's sequence and position). */
export interface BlockWrite {
  teamId: number
  id: string
  block: Block
}

export interface RecordingStore {
  init(): Promise<void>
  write(blocks: BlockWrite[]): Promise<void>
  /** newest first; `limit` rows at most */
  list(query: RecordingListQuery): Promise<RecordingRow[]>
  get(teamId: number, sessionId: string): Promise<RecordingRow | null>
  /** the stored bytes of these sessions (those with none left out), in one read */
  sessionSizes(teamId: number, sessionIds: string[]): Promise<Map<string, number>>
  /** the session's blocks in the order they were stored (a block's key is its index here), the first `limit` at most */
  blocks(teamId: number, sessionId: string, limit?: number): Promise<BlockInfo[]>
  /** the JSON lines of blocks `from`..`to` (indexes, inclusive), stopping before `maxBytes` would be passed */
  lines(teamId: number, sessionId: string, from: number, to: number, maxBytes: number): Promise<{ text: string; complete: boolean }>
  delete(teamId: number, sessionId: string): Promise<boolean>
  /** every recording of these distinct ids (a person erased); how many went */
  deleteDistinctIds(teamId: number, distinctIds: string[]): Promise<number>
  /** recordings that ended before their project's cutoff (ms); how many went */
  expire(cutoffOf: (teamId: number) => number): Promise<number>
  health(): Promise<boolean>
  close(): Promise<void>
}
