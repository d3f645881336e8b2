// Cohort breakdowns (`breakdown_type: "cohort"`, `breakdown: [ids, or "all"]`): each cohort's persons resolved as a
// cohort filter's are (person-sets.ts: one scan of the project's persons each, at most MAX_PERSONS members), once
// per query whatever its series and periods, and handed to the runner as one condition per cohort.
import type { InsightContext } from './service'

export interface CohortCondition {
  /** the cohort's id, or 'all' (every person): the answer's breakdown_value */
  id: number | 'all'
  /** HogQL of its persons' events (null: every event) */
  members: string | null
}

export async function cohortConditions(ids: readonly (number | 'all')[], ctx: InsightContext): Promise<CohortCondition[]> {
  const out: CohortCondition[] = []
  for (const [i, id] of ids.entries()) {
    out.push({ id, members: id === 'all' ? null : await ctx.properties([{ type: 'cohort', key: 'id', value: id }], `query__breakdownFilter__breakdown__${i}`) })
  }
  return out
}
