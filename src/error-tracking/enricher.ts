// In the flush worker, where captured events become stored rows: an `$exception` event gets its fingerprint, PostHog's
// derived properties and `$exception_issue_id`. Never on the serving thread (fingerprinting hashes the stack), and
// never waiting for Postgres: a fingerprint's issue is the UUID derived from it (issueIdOf) unless it was moved to
// another issue (a merge, a split), which a bounded copy of Postgres' moved fingerprints says, refreshed in the
// background. When that copy is stale (Postgres down, a merge a second ago) an event carries the derived id; reads
// never trust it alone (the issues API goes through the fingerprints).
import type { Sql } from 'postgres'
import type { CapturedEvent } from '../capture/normalize'
import type { Logger } from '../log'
import { fingerprintException, issueIdOf, type ExceptionProperties } from './fingerprint'
import { movedFingerprints } from './repository'

export const EXCEPTION_EVENT = '$exception'

/** moved fingerprints remembered (beyond: events carry the derived id; reads are right anyway) */
export const MAX_MOVED = 50_000
/** how often the moved fingerprints are read again */
export const MOVED_REFRESH_MS = 2_000

export type EnrichedException = ExceptionProperties & { $exception_issue_id: string }

export class ExceptionEnricher {
  /** `team\0fingerprint` → the issue it was moved to */
  private moved = new Map<string, string>()
  /** an event's properties are fingerprinted once, whichever consumer asks first (the store writer, the issues consumer) */
  private readonly memo = new WeakMap<CapturedEvent, ExceptionProperties>()
  private timer: ReturnType<typeof setInterval> | undefined
  private refreshing = false

  constructor(private readonly deps: { sql?: Sql; log?: Logger; maxMoved?: number } = {}) {}

  /** What fingerprinting made of the event (null: not an exception). */
  fingerprint(e: CapturedEvent): ExceptionProperties | null {
    if (e.event !== EXCEPTION_EVENT) return null
    let p = this.memo.get(e)
    if (!p) this.memo.set(e, (p = fingerprintException(e.properties)))
    return p
  }

  issueOf(teamId: number, fingerprint: string): string {
    return this.moved.get(`${teamId}\u0000${fingerprint}`) ?? issueIdOf(teamId, fingerprint)
  }

  /** The properties added to a stored `$exception` event (undefined for any other event). */
  enrich(teamId: number, e: CapturedEvent): EnrichedException | undefined {
    const p = this.fingerprint(e)
    if (!p) return undefined
    return { ...p, $exception_issue_id: this.issueOf(teamId, p.$exception_fingerprint) }
  }

  /** Read the moved fingerprints now (a failure keeps the copy there is). */
  async refresh(): Promise<void> {
    if (!this.deps.sql || this.refreshing) return
    this.refreshing = true
    try {
      const rows = await movedFingerprints(this.deps.sql, this.deps.maxMoved ?? MAX_MOVED)
      const next = new Map<string, string>()
      for (const r of rows) next.set(`${r.teamId}\u0000${r.fingerprint}`, r.issueId)
      this.moved = next
    } catch (error) {
      this.deps.log?.debug({ err: error }, 'moved fingerprints not read (Postgres unavailable?)')
    } finally {
      this.refreshing = false
    }
  }

  start(intervalMs = MOVED_REFRESH_MS): void {
    void this.refresh()
    this.timer = setInterval(() => void this.refresh(), intervalMs)
    this.timer.unref?.()
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer)
  }
}
