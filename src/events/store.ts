// The event store: where flushed events land and where the events API reads them back.
// Two implementations (ClickHouse, embedded SQLite) share one contract test suite.

export interface StoredEvent {
  uuid: string
  teamId: number
  event: string
  distinctId: string
  /** JSON text of the event's properties */
  properties: string
  /** epoch milliseconds */
  timestamp: number
  /** epoch milliseconds: when the service received it */
  createdAt: number
  personId: string | null
}

export interface EventQuery {
  teamId: number
  event?: string
  distinctId?: string
  /** inclusive lower bound, epoch ms */
  after?: number
  /** exclusive upper bound, epoch ms */
  before?: number
  limit: number
  /** continue strictly after this row in (timestamp desc, uuid desc) order */
  cursor?: { timestamp: number; uuid: string }
}

export interface InsertOptions {
  /** a previous attempt with these rows may have landed (in part): skip what is already stored */
  inDoubt: boolean
}

export interface EventStore {
  readonly kind: 'embedded' | 'clickhouse'
  /** timestamps are stored to this precision (ms) */
  readonly timestampPrecisionMs: number
  init(): Promise<void>
  /** Write the rows; returns how many were written (rows already stored are skipped when in doubt). */
  insertBatch(rows: StoredEvent[], options: InsertOptions): Promise<number>
  /** newest first: timestamp desc, then uuid desc */
  query(q: EventQuery): Promise<StoredEvent[]>
  /** what query(q) would answer, as each row's size in UTF-8 bytes (name, distinct id, properties), same order */
  rowSizes(q: EventQuery): Promise<number[]>
  /** how many stored rows carry each uuid (for tests and replay checks) */
  countByUuid(teamId: number, uuids: string[]): Promise<Map<string, number>>
  /** Remove every event of these distinct ids in the project (a person's erasure); gone for readers when it returns. */
  deleteEvents(teamId: number, distinctIds: string[]): Promise<void>
  health(): Promise<boolean>
  close(): Promise<void>
}

/** Why an insert failed: transient failures are retried; permanent ones go to dead letters row by row. */
export class StoreError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
    override readonly cause?: unknown,
  ) {
    super(message)
  }
}
