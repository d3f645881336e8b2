// A survey's stats, computed on the analytics thread (src/analytics/); the REST writes stay where the flag cache is.
import type { Operations } from '../http/offload'
import type { SurveyStatsService } from './stats'

export const surveyOperations = {
  'surveys.stats': (
    s: { surveyStats: Pick<SurveyStatsService, 'stats'> },
    [teamId, id, from, to]: [number, string | null, string | null, string | null],
    signal: AbortSignal,
  ) => s.surveyStats.stats(teamId, id, from, to, signal),
} satisfies Operations<never>
