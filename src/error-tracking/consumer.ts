// The flush worker's consumer of the log that keeps issues: per batch and project, the fingerprints of its
// `$exception` events are recorded (a new one makes an issue, named by the exception's type, described by its
// message, up to the project's cap), seen times move, and a resolved issue seen again is active again. Replaying a
// batch converges to the same state (inserts on conflict do nothing; times by least/greatest; reopening compares
// the time of receipt the log kept with the time of resolution). Postgres down: the batch is retried, while the store
// writer goes on storing the same events (it needs no Postgres, see enricher.ts).
import type { Sql } from 'postgres'
import { isDataFault } from '../db/postgres'
import type { Logger } from '../log'
import type { Batch, BatchHandler } from '../pipeline/consumer'
import type { PipelineMetrics } from '../pipeline/metrics-relay'
import type { ExceptionEnricher } from './enricher'
import { recordSightings, type Sighting } from './repository'

export const ERRORS_CONSUMER = 'errors'
/** a new issue's name and description, cut (the table's checks) */
const MAX_NAME = 2048
const MAX_DESCRIPTION = 4096

export class IssueRecorder implements BatchHandler {
  readonly name = ERRORS_CONSUMER
  readonly store = 'postgres'

  constructor(
    private readonly deps: {
      sql: Sql
      enricher: ExceptionEnricher
      /** ERROR_TRACKING_MAX_ISSUES: issues per project */
      maxIssues: number
      metrics: PipelineMetrics
      log: Logger
    },
  ) {}

  async handle(batch: Batch): Promise<void> {
    const byTeam = new Map<number, Map<string, Sighting>>()
    for (const record of batch.records) {
      for (const e of record.events) {
        const p = this.deps.enricher.fingerprint(e)
        if (!p) continue
        let seen = byTeam.get(record.projectId)
        if (!seen) byTeam.set(record.projectId, (seen = new Map()))
        const s = seen.get(p.$exception_fingerprint)
        if (s) {
          s.firstSeen = Math.min(s.firstSeen, e.timestamp)
          s.lastSeen = Math.max(s.lastSeen, e.timestamp)
          s.lastReceived = Math.max(s.lastReceived, record.receivedAt)
        } else {
          seen.set(p.$exception_fingerprint, {
            fingerprint: p.$exception_fingerprint,
            name: (p.$exception_types[0] ?? 'Error').slice(0, MAX_NAME),
            description: (p.$exception_values[0] ?? '').slice(0, MAX_DESCRIPTION),
            firstSeen: e.timestamp,
            lastSeen: e.timestamp,
            lastReceived: record.receivedAt,
          })
        }
      }
    }
    const { metrics } = this.deps
    for (const [teamId, seen] of byTeam) {
      const outcome = await recordSightings(this.deps.sql, teamId, [...seen.values()], this.deps.maxIssues)
      if (outcome.created) metrics.inc('errorTrackingIssues', { outcome: 'created' }, outcome.created)
      if (outcome.reopened) metrics.inc('errorTrackingIssues', { outcome: 'reopened' }, outcome.reopened)
      if (outcome.refused) metrics.inc('errorTrackingIssues', { outcome: 'refused_max_issues' }, outcome.refused)
    }
  }

  async probe(): Promise<boolean> {
    await this.deps.sql`select 1`
    return true
  }

  rejects(error: unknown): boolean {
    return isDataFault(error)
  }
}
