// A survey as the private API answers it (PostHog's SurveySerializer) and as posthog-js is sent it
// (SurveyAPISerializer: what the client needs to decide and render, no description, flags by key).
import type { MinimalFlag, SurveyRow } from './repository'

const iso = (v: Date | string | null): string | null => (v === null ? null : new Date(v).toISOString())
const keyOf = (flag: MinimalFlag | null) => (flag && !flag.deleted ? flag.key : null)

export function surveyJson(row: SurveyRow) {
  const live = (flag: MinimalFlag | null) => (flag && !flag.deleted ? flag : null)
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    schedule: row.schedule,
    linked_flag: live(row.linked_flag),
    linked_flag_id: row.linked_flag_id,
    targeting_flag: live(row.targeting_flag),
    internal_targeting_flag: live(row.internal_targeting_flag),
    questions: row.questions,
    conditions: row.conditions,
    appearance: row.appearance,
    created_at: iso(row.created_at),
    created_by: row.created_by,
    start_date: iso(row.start_date),
    end_date: iso(row.end_date),
    archived: row.archived,
    responses_limit: row.responses_limit,
    feature_flag_keys: [
      { key: 'linked_flag_key', value: keyOf(row.linked_flag) },
      { key: 'targeting_flag_key', value: keyOf(row.targeting_flag) },
      { key: 'internal_targeting_flag_key', value: keyOf(row.internal_targeting_flag) },
      { key: 'internal_response_sampling_flag_key', value: null },
    ],
    iteration_count: row.iteration_count,
    iteration_frequency_days: row.iteration_frequency_days,
    iteration_start_dates: row.iteration_start_dates,
    current_iteration: row.current_iteration,
    current_iteration_start_date: iso(row.current_iteration_start_date),
    response_sampling_start_date: iso(row.response_sampling_start_date),
    response_sampling_interval_type: row.response_sampling_interval_type,
    response_sampling_interval: row.response_sampling_interval,
    response_sampling_limit: row.response_sampling_limit,
    response_sampling_daily_limits: null,
    enable_partial_responses: row.enable_partial_responses,
    user_access_level: 'editor',
  }
}

export type SurveyAction = { id: number; name: string; steps: unknown }

/** The public shape; `actions`: the project's actions by id, whose steps replace the ids conditions.actions names. */
export function publicSurveyJson(row: SurveyRow, actions: ReadonlyMap<number, SurveyAction>) {
  let conditions = row.conditions
  const named = conditions?.actions as { values?: { id?: unknown }[] } | undefined
  if (conditions && Array.isArray(named?.values)) {
    const values = named.values.map((v) => actions.get(Number(v?.id))).filter((a): a is SurveyAction => a !== undefined)
    conditions = { ...conditions, actions: { values } }
  }
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    linked_flag_key: keyOf(row.linked_flag),
    targeting_flag_key: keyOf(row.targeting_flag),
    internal_targeting_flag_key: keyOf(row.internal_targeting_flag),
    questions: row.questions,
    conditions,
    appearance: row.appearance,
    start_date: iso(row.start_date),
    end_date: iso(row.end_date),
    current_iteration: row.current_iteration,
    current_iteration_start_date: iso(row.current_iteration_start_date),
    schedule: row.schedule,
    enable_partial_responses: row.enable_partial_responses,
  }
}
