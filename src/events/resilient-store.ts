// An event store that may be unreachable when the process starts: the service starts anyway (capture keeps
// logging), the store is initialised on first use, and every call until then fails as a transient error.
import { StoreError, type EventQuery, type EventStore, type InsertOptions, type StoredEvent } from './store'

export class ResilientStore implements EventStore {
  private initialised: Promise<void> | null = null
  private lastAttempt = 0
  /** why the last attempt to initialise failed: carried by the errors until the next attempt (an outage's reason) */
  private lastFailure: unknown = undefined

  constructor(
    readonly inner: EventStore,
    private readonly retryEveryMs = 1000,
  ) {}

  get kind() {
    return this.inner.kind
  }

  get timestampPrecisionMs() {
    return this.inner.timestampPrecisionMs
  }

  /** Try once now; a transient failure is left for the next call to retry. */
  async init(): Promise<void> {
    try {
      await this.ready()
    } catch (error) {
      if (!(error instanceof StoreError && error.transient)) throw error
    }
  }

  private ready(): Promise<void> {
    if (this.initialised) return this.initialised
    const now = Date.now()
    if (now - this.lastAttempt < this.retryEveryMs) {
      const why = (this.lastFailure as Error | undefined)?.message
      return Promise.reject(new StoreError(`${this.inner.kind} store not reachable yet${why ? `: ${why}` : ''}`, true, this.lastFailure))
    }
    this.lastAttempt = now
    const attempt = this.inner.init()
    this.initialised = attempt
    attempt.then(
      () => (this.lastFailure = undefined),
      (error) => {
        this.lastFailure = error
        if (this.initialised === attempt) this.initialised = null
      },
    )
    return attempt
  }

  async insertBatch(rows: StoredEvent[], options: InsertOptions): Promise<number> {
    await this.ready()
    return this.inner.insertBatch(rows, options)
  }

  async query(q: EventQuery): Promise<StoredEvent[]> {
    await this.ready()
    return this.inner.query(q)
  }

  async rowSizes(q: EventQuery): Promise<number[]> {
    await this.ready()
    return this.inner.rowSizes(q)
  }

  async countByUuid(teamId: number, uuids: string[]): Promise<Map<string, number>> {
    await this.ready()
    return this.inner.countByUuid(teamId, uuids)
  }

  async deleteEvents(teamId: number, distinctIds: string[]): Promise<void> {
    await this.ready()
    return this.inner.deleteEvents(teamId, distinctIds)
  }

  async health(): Promise<boolean> {
    try {
      await this.ready()
    } catch {
      return false
    }
    return this.inner.health()
  }

  close(): Promise<void> {
    return this.inner.close()
  }
}
