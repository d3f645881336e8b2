// Surveys in Postgres. Writes run inside the flag service's write transaction (the project's flag write lock), so a
// survey and its targeting flags commit together; reads join the flags for their keys and state.
import type { Sql } from 'postgres'
import { asJson } from '../db/postgres'
import { cancelledWithRequest } from '../db/cancel'
import { userObject } from '../flags/repository'
import type { UserBasic } from '../projects/users'
import type { SurveyInput } from './validation'

/** A flag as a survey shows it (PostHog's MinimalFeatureFlagSerializer). */
export interface MinimalFlag {
  id: number
  team_id: number
  key: string
  name: string
  filters: Record<string, unknown>
  deleted: boolean
  active: boolean
  ensure_experience_continuity: boolean
}

export interface SurveyRow {
  id: string
  team_id: number
  name: string
  description: string
  type: string
  schedule: string
  linked_flag_id: number | null
  targeting_flag_id: number | null
  internal_targeting_flag_id: number | null
  questions: Record<string, unknown>[]
  conditions: Record<string, unknown> | null
  appearance: Record<string, unknown> | null
  start_date: Date | string | null
  end_date: Date | string | null
  archived: boolean
  responses_limit: number | null
  iteration_count: number | null
  iteration_frequency_days: number | null
  iteration_start_dates: string[] | null
  current_iteration: number | null
  current_iteration_start_date: Date | string | null
  enable_partial_responses: boolean
  response_sampling_start_date: Date | string | null
  response_sampling_interval_type: string | null
  response_sampling_interval: number | null
  response_sampling_limit: number | null
  created_at: Date | string
  updated_at: Date | string
  created_by: UserBasic | null
  linked_flag: MinimalFlag | null
  targeting_flag: MinimalFlag | null
  internal_targeting_flag: MinimalFlag | null
}

const flagObject = (sql: Sql, column: string) => sql`
  (select json_build_object('id', f.id, 'team_id', f.team_id, 'key', f.key, 'name', f.name, 'filters', f.filters,
                            'deleted', f.deleted, 'active', f.active, 'ensure_experience_continuity', f.ensure_experience_continuity)
     from feature_flags f where f.id = ${sql(column)})`

function selectSurveys(sql: Sql) {
  return sql`
    select s.*,
           (select ${userObject(sql)} from users u where u.id = s.created_by_id) as created_by,
           ${flagObject(sql, 'linked_flag_id')} as linked_flag,
           ${flagObject(sql, 'targeting_flag_id')} as targeting_flag,
           ${flagObject(sql, 'internal_targeting_flag_id')} as internal_targeting_flag
      from surveys s`
}

export interface SurveyListOptions {
  limit: number
  offset: number
  search?: string
  archived?: boolean
}

export async function listSurveys(sql: Sql, teamId: number, o: SurveyListOptions): Promise<{ count: number; rows: SurveyRow[] }> {
  const search = o.search ? `%${o.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null
  const where = sql`
    s.team_id = ${teamId}
    and (${search}::text is null or s.name ilike ${search})
    and (${o.archived ?? null}::boolean is null or s.archived = ${o.archived ?? null})`
  const [[{ count }], rows] = await Promise.all([
    cancelledWithRequest(sql<{ count: number }[]>`select count(*)::int as count from surveys s where ${where}`),
    cancelledWithRequest(sql<SurveyRow[]>`${selectSurveys(sql)} where ${where} order by s.created_at desc, s.id limit ${o.limit} offset ${o.offset}`),
  ])
  return { count, rows }
}

/** Every survey of the project that is not archived (what posthog-js is sent), in creation order. */
export async function activeSurveys(sql: Sql, teamId: number): Promise<SurveyRow[]> {
  return sql<SurveyRow[]>`${selectSurveys(sql)} where s.team_id = ${teamId} and not s.archived order by s.created_at, s.id`
}

export async function getSurvey(sql: Sql, teamId: number, id: string): Promise<SurveyRow | null> {
  const [row] = await sql<SurveyRow[]>`${selectSurveys(sql)} where s.team_id = ${teamId} and s.id = ${id}`
  return row ?? null
}

export async function countSurveys(tx: Sql, teamId: number): Promise<number> {
  const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from surveys where team_id = ${teamId}`
  return n
}

export async function nameTaken(tx: Sql, teamId: number, name: string, exceptId: string | null): Promise<boolean> {
  const [row] = await tx`select 1 from surveys where team_id = ${teamId} and name = ${name} and (${exceptId}::uuid is null or id <> ${exceptId}::uuid) limit 1`
  return row !== undefined
}

/** The ids among `ids` that are flags of the project (not deleted). */
export async function projectFlagIds(tx: Sql, teamId: number, ids: number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set()
  const rows = await tx<{ id: number }[]>`select id from feature_flags where team_id = ${teamId} and not deleted and id = any(${tx.array(ids)}::int[])`
  return new Set(rows.map((r) => r.id))
}

/** The project's actions (not deleted) among `ids`, with their steps, as posthog-js matches them. */
export async function projectActions(sql: Sql, teamId: number, ids: number[]): Promise<{ id: number; name: string; steps: unknown }[]> {
  if (ids.length === 0) return []
  return sql<{ id: number; name: string; steps: unknown }[]>`
    select id, name, steps from actions where team_id = ${teamId} and not deleted and id = any(${sql.array(ids)}::int[])`
}

export type SurveyFields = Omit<SurveyInput, 'targeting_flag_filters' | 'remove_targeting_flag' | 'actionIds'> & {
  targeting_flag_id?: number | null
  internal_targeting_flag_id?: number | null
  iteration_start_dates?: string[] | null
  current_iteration?: number | null
  current_iteration_start_date?: Date | null
}

export async function insertSurvey(tx: Sql, teamId: number, userId: number, id: string, f: SurveyFields & { name: string; type: string }): Promise<void> {
  const json = (v: unknown) => (v == null ? null : tx.json(asJson(v)))
  await tx`
    insert into surveys (id, team_id, name, description, type, schedule, linked_flag_id, questions, conditions, appearance,
                         start_date, end_date, archived, responses_limit, iteration_count, iteration_frequency_days,
                         enable_partial_responses, response_sampling_start_date, response_sampling_interval_type,
                         response_sampling_interval, response_sampling_limit, created_by_id)
    values (${id}, ${teamId}, ${f.name}, ${f.description ?? ''}, ${f.type}, ${f.schedule ?? 'once'}, ${f.linked_flag_id ?? null},
            ${tx.json(asJson(f.questions ?? []))}, ${json(f.conditions)}, ${json(f.appearance)}, ${f.start_date ?? null},
            ${f.end_date ?? null}, ${f.archived ?? false}, ${f.responses_limit ?? null}, ${f.iteration_count ?? null},
            ${f.iteration_frequency_days ?? null}, ${f.enable_partial_responses ?? false}, ${f.response_sampling_start_date ?? null},
            ${f.response_sampling_interval_type ?? null}, ${f.response_sampling_interval ?? null}, ${f.response_sampling_limit ?? null}, ${userId})`
}

/** Write the fields given (undefined keeps the stored value; null clears a nullable one). */
export async function updateSurvey(tx: Sql, teamId: number, id: string, f: SurveyFields): Promise<void> {
  const has = (k: keyof SurveyFields) => f[k] !== undefined
  const json = (k: keyof SurveyFields) => (f[k] == null ? null : tx.json(asJson(f[k])))
  await tx`
    update surveys set
      name = coalesce(${f.name ?? null}, name),
      description = coalesce(${f.description ?? null}, description),
      type = coalesce(${f.type ?? null}, type),
      schedule = coalesce(${f.schedule ?? null}, schedule),
      linked_flag_id = case when ${has('linked_flag_id')}::boolean then ${f.linked_flag_id ?? null}::int else linked_flag_id end,
      targeting_flag_id = case when ${has('targeting_flag_id')}::boolean then ${f.targeting_flag_id ?? null}::int else targeting_flag_id end,
      internal_targeting_flag_id = case when ${has('internal_targeting_flag_id')}::boolean then ${f.internal_targeting_flag_id ?? null}::int else internal_targeting_flag_id end,
      questions = coalesce(${json('questions')}::jsonb, questions),
      conditions = case when ${has('conditions')}::boolean then ${json('conditions')}::jsonb else conditions end,
      appearance = case when ${has('appearance')}::boolean then ${json('appearance')}::jsonb else appearance end,
      start_date = case when ${has('start_date')}::boolean then ${f.start_date ?? null}::timestamptz else start_date end,
      end_date = case when ${has('end_date')}::boolean then ${f.end_date ?? null}::timestamptz else end_date end,
      archived = coalesce(${f.archived ?? null}::boolean, archived),
      responses_limit = case when ${has('responses_limit')}::boolean then ${f.responses_limit ?? null}::int else responses_limit end,
      iteration_count = case when ${has('iteration_count')}::boolean then ${f.iteration_count ?? null}::int else iteration_count end,
      iteration_frequency_days = case when ${has('iteration_frequency_days')}::boolean then ${f.iteration_frequency_days ?? null}::int else iteration_frequency_days end,
      iteration_start_dates = case when ${has('iteration_start_dates')}::boolean then ${json('iteration_start_dates')}::jsonb else iteration_start_dates end,
      current_iteration = case when ${has('current_iteration')}::boolean then ${f.current_iteration ?? null}::int else current_iteration end,
      current_iteration_start_date = case when ${has('current_iteration_start_date')}::boolean then ${f.current_iteration_start_date ?? null}::timestamptz else current_iteration_start_date end,
      enable_partial_responses = coalesce(${f.enable_partial_responses ?? null}::boolean, enable_partial_responses),
      response_sampling_start_date = case when ${has('response_sampling_start_date')}::boolean then ${f.response_sampling_start_date ?? null}::timestamptz else response_sampling_start_date end,
      response_sampling_interval_type = case when ${has('response_sampling_interval_type')}::boolean then ${f.response_sampling_interval_type ?? null}::text else response_sampling_interval_type end,
      response_sampling_interval = case when ${has('response_sampling_interval')}::boolean then ${f.response_sampling_interval ?? null}::int else response_sampling_interval end,
      response_sampling_limit = case when ${has('response_sampling_limit')}::boolean then ${f.response_sampling_limit ?? null}::int else response_sampling_limit end,
      updated_at = now()
    where team_id = ${teamId} and id = ${id}`
}

export async function deleteSurvey(tx: Sql, teamId: number, id: string): Promise<void> {
  await tx`delete from surveys where team_id = ${teamId} and id = ${id}`
}
