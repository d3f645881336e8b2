// The flags a survey owns, made as PostHog makes them: the targeting flag from `targeting_flag_filters` (who may
// see it) and the internal targeting flag (whoever has neither dismissed nor answered it, in this iteration).
// Both are ordinary feature flags, keyed `survey-targeting-…`, answered by /flags like any other.

export const TARGETING_FLAG_PREFIX = 'survey-targeting-'

/** A fresh key: the prefix and a random part (`-custom` for the internal flag, as PostHog names it). */
export function targetingFlagKey(internal: boolean): string {
  const hash = crypto.randomUUID().replace(/-/g, '').slice(0, 12)
  return `${TARGETING_FLAG_PREFIX}${hash}${internal ? '-custom' : ''}`
}

/** The person property suffix of a survey: its id, and its iteration when iterations are on. */
export function surveyPropertySuffix(surveyId: string, iterationCount: number | null, currentIteration: number | null): string {
  return iterationCount && iterationCount > 0 && currentIteration ? `${surveyId}/${currentIteration}` : surveyId
}

/** One group, rollout 100: `$survey_dismissed/<suffix>` and `$survey_responded/<suffix>` both not set on the person. */
export function internalTargetingFilters(suffix: string) {
  const notSet = (key: string) => ({ key, type: 'person', value: 'is_not_set', operator: 'is_not_set' })
  return {
    groups: [{ variant: null, properties: [notSet(`$survey_dismissed/${suffix}`), notSet(`$survey_responded/${suffix}`)], rollout_percentage: 100 }],
  }
}

const DAY_MS = 86_400_000

/** The start of each iteration: `count` of them, `everyDays` apart from `start`. */
export function iterationStartDates(start: Date, count: number, everyDays: number): string[] {
  return Array.from({ length: count }, (_, i) => new Date(start.getTime() + i * everyDays * DAY_MS).toISOString())
}

/** The iteration running at `now` (1-based) and its start, or null before the first. */
export function currentIteration(dates: readonly string[], now: number): { iteration: number; start: Date } | null {
  let found: { iteration: number; start: Date } | null = null
  dates.forEach((d, i) => {
    const at = Date.parse(d)
    if (at <= now) found = { iteration: i + 1, start: new Date(at) }
  })
  return found
}
