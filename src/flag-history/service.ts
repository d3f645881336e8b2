// A flag's change history in PostHog's activity-log shape. Never sees the HTTP context.
import type { Sql } from 'postgres'
import { errors } from '../http/errors'
import { isoDate } from '../http/format'
import { NUMERIC_ID } from '../http/fields'
import { flagChanges, flagExists, type FlagChangeRow } from './repository'

export function changeJson(row: FlagChangeRow) {
  return {
    id: row.id,
    activity: row.activity,
    scope: 'FeatureFlag' as const,
    item_id: String(row.flagId),
    user: row.user,
    detail: {
      name: row.key,
      version: row.version,
      changes: row.changes.map((c) => ({
        type: 'FeatureFlag' as const,
        action: row.activity === 'created' ? ('created' as const) : ('changed' as const),
        field: c.field,
        before: c.before ?? null,
        after: c.after ?? null,
      })),
    },
    created_at: isoDate(row.createdAt)!,
  }
}

export class FlagHistoryService {
  constructor(private readonly sql: Sql) {}

  /** The flag's changes, newest first; 404 when the project has no flag with this id. */
  async list(teamId: number, flagIdParam: string, limit: number, offset: number) {
    const flagId = NUMERIC_ID.test(flagIdParam) ? Number(flagIdParam) : NaN
    if (!Number.isSafeInteger(flagId) || !(await flagExists(this.sql, teamId, flagId))) throw errors.notFound()
    const rows = await flagChanges(this.sql, teamId, flagId, limit + 1, offset)
    return { rows: rows.slice(0, limit).map(changeJson), more: rows.length > limit }
  }
}
