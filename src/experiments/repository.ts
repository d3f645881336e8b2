// Experiments in Postgres. Writes run inside the flag service's write transaction (the project's flag lock), so an
// experiment and its flag commit together; reads join the flag for its key and state.
import type { Sql } from 'postgres'
import { asJson } from '../db/postgres'
import { cancelledWithRequest } from '../db/cancel'
import { userObject } from '../flags/repository'
import type { UserBasic } from '../projects/users'

export interface ExperimentRow {
  id: number
  team_id: number
  name: string
  description: string
  feature_flag_id: number | null
  parameters: Record<string, unknown>
  metrics: unknown[]
  metrics_secondary: unknown[]
  exposure_criteria: Record<string, unknown>
  stats_config: Record<string, unknown>
  conclusion: string | null
  conclusion_comment: string | null
  start_date: Date | string | null
  end_date: Date | string | null
  archived: boolean
  deleted: boolean
  created_at: Date | string
  updated_at: Date | string
  created_by: UserBasic | null
  /** the flag, as the experiment shows it (null if its row is gone) */
  flag: { id: number; key: string; name: string; filters: Record<string, unknown>; active: boolean; deleted: boolean } | null
}

function selectExperiments(sql: Sql) {
  return sql`
    select e.id, e.team_id, e.name, e.description, e.feature_flag_id, e.parameters, e.metrics, e.metrics_secondary,
           e.exposure_criteria, e.stats_config, e.conclusion, e.conclusion_comment, e.start_date, e.end_date,
           e.archived, e.deleted, e.created_at, e.updated_at,
           (select ${userObject(sql)} from users u where u.id = e.created_by_id) as created_by,
           (select json_build_object('id', f.id, 'key', f.key, 'name', f.name, 'filters', f.filters, 'active', f.active, 'deleted', f.deleted)
              from feature_flags f where f.id = e.feature_flag_id) as flag
      from experiments e`
}

export interface ExperimentListOptions {
  limit: number
  offset: number
  /** case-insensitive substring of the name or the flag's key */
  search?: string
  status?: 'draft' | 'running' | 'complete'
  archived?: boolean
}

export async function listExperiments(sql: Sql, teamId: number, o: ExperimentListOptions): Promise<{ count: number; rows: ExperimentRow[] }> {
  const search = o.search ? `%${o.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null
  const status = o.status ?? null
  const where = sql`
    e.team_id = ${teamId} and not e.deleted
    and (${search}::text is null or e.name ilike ${search}
         or exists (select 1 from feature_flags f where f.id = e.feature_flag_id and f.key ilike ${search}))
    and (${o.archived ?? null}::boolean is null or e.archived = ${o.archived ?? null})
    and (${status}::text is null
         or (${status} = 'draft' and e.start_date is null)
         or (${status} = 'running' and e.start_date is not null and e.end_date is null)
         or (${status} = 'complete' and e.end_date is not null))`
  const [[{ count }], rows] = await Promise.all([
    cancelledWithRequest(sql<{ count: number }[]>`select count(*)::int as count from experiments e where ${where}`),
    cancelledWithRequest(sql<ExperimentRow[]>`${selectExperiments(sql)} where ${where} order by e.created_at desc, e.id desc limit ${o.limit} offset ${o.offset}`),
  ])
  return { count, rows }
}

/** An experiment of the project, deleted or not. */
export async function getExperiment(sql: Sql, teamId: number, id: number): Promise<ExperimentRow | null> {
  const [row] = await sql<ExperimentRow[]>`${selectExperiments(sql)} where e.team_id = ${teamId} and e.id = ${id}`
  return row ?? null
}

/** Whether an experiment (not deleted) on this flag has launched. */
export async function launchedOnFlag(tx: Sql, teamId: number, flagId: number): Promise<boolean> {
  const [row] = await tx`select 1 from experiments where team_id = ${teamId} and feature_flag_id = ${flagId} and not deleted and start_date is not null limit 1`
  return row !== undefined
}

/** Whether an experiment (not deleted) is run on this flag. */
export async function experimentOnFlag(tx: Sql, teamId: number, flagId: number): Promise<boolean> {
  const [row] = await tx`select 1 from experiments where team_id = ${teamId} and feature_flag_id = ${flagId} and not deleted limit 1`
  return row !== undefined
}

export async function countExperiments(tx: Sql, teamId: number): Promise<number> {
  const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from experiments where team_id = ${teamId} and not deleted`
  return n
}

export interface ExperimentFields {
  name?: string
  description?: string
  parameters?: Record<string, unknown>
  metrics?: unknown[]
  metrics_secondary?: unknown[]
  exposure_criteria?: Record<string, unknown>
  stats_config?: Record<string, unknown>
  conclusion?: string | null
  conclusion_comment?: string | null
  start_date?: Date | null
  end_date?: Date | null
  archived?: boolean
  deleted?: boolean
}

/** Insert an experiment; `tx` holds the project's flag write lock. */
export async function insertExperiment(tx: Sql, teamId: number, userId: number, flagId: number, f: ExperimentFields & { name: string }): Promise<ExperimentRow> {
  const [row] = await tx<{ id: number }[]>`
    insert into experiments (team_id, name, description, feature_flag_id, parameters, metrics, metrics_secondary,
                             exposure_criteria, stats_config, conclusion, conclusion_comment, start_date, end_date,
                             archived, created_by_id)
    values (${teamId}, ${f.name}, ${f.description ?? ''}, ${flagId}, ${tx.json(asJson(f.parameters ?? {}))},
            ${tx.json(asJson(f.metrics ?? []))}, ${tx.json(asJson(f.metrics_secondary ?? []))},
            ${tx.json(asJson(f.exposure_criteria ?? {}))}, ${tx.json(asJson(f.stats_config ?? {}))},
            ${f.conclusion ?? null}, ${f.conclusion_comment ?? null}, ${f.start_date ?? null}, ${f.end_date ?? null},
            ${f.archived ?? false}, ${userId})
    returning id`
  return (await getExperiment(tx, teamId, row.id))!
}

/** Write the fields given (a field left undefined keeps its value; start/end dates may be set to null). */
export async function updateExperiment(tx: Sql, teamId: number, id: number, f: ExperimentFields): Promise<ExperimentRow> {
  const json = (v: unknown) => (v === undefined ? null : tx.json(asJson(v)))
  const has = (k: keyof ExperimentFields) => f[k] !== undefined
  await tx`
    update experiments set
      name = coalesce(${f.name ?? null}, name),
      description = coalesce(${f.description ?? null}, description),
      parameters = coalesce(${json(f.parameters)}::jsonb, parameters),
      metrics = coalesce(${json(f.metrics)}::jsonb, metrics),
      metrics_secondary = coalesce(${json(f.metrics_secondary)}::jsonb, metrics_secondary),
      exposure_criteria = coalesce(${json(f.exposure_criteria)}::jsonb, exposure_criteria),
      stats_config = coalesce(${json(f.stats_config)}::jsonb, stats_config),
      conclusion = case when ${has('conclusion')}::boolean then ${f.conclusion ?? null}::text else conclusion end,
      conclusion_comment = case when ${has('conclusion_comment')}::boolean then ${f.conclusion_comment ?? null}::text else conclusion_comment end,
      start_date = case when ${has('start_date')}::boolean then ${f.start_date ?? null}::timestamptz else start_date end,
      end_date = case when ${has('end_date')}::boolean then ${f.end_date ?? null}::timestamptz else end_date end,
      archived = coalesce(${f.archived ?? null}::boolean, archived),
      deleted = coalesce(${f.deleted ?? null}::boolean, deleted),
      updated_at = now()
    where team_id = ${teamId} and id = ${id}`
  return (await getExperiment(tx, teamId, id))!
}
