// Actions in Postgres. Writes run under the project's action lock, so that two writes cannot both pass the check
// that a name is not taken.
import type { Sql } from 'postgres'
import { asJson, inTransaction } from '../db/postgres'
import { userObject } from '../flags/repository'
import type { UserBasic } from '../projects/users'
import type { ActionInput, StepInput } from './validation'

/** Advisory lock of a project's actions ("phac"). */
const ACTION_WRITE_LOCK = 0x70_68_61_63

export async function withActionLock<T>(sql: Sql, teamId: number, work: (tx: Sql) => Promise<T>): Promise<T> {
  return (await sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    await tx`select pg_advisory_xact_lock(${ACTION_WRITE_LOCK}::int, ${teamId}::int)`
    return work(tx)
  })) as T
}

export interface ActionRow {
  id: number
  team_id: number
  name: string
  description: string
  tags: string[]
  post_to_slack: boolean
  slack_message_format: string
  steps: StepInput[]
  deleted: boolean
  pinned_at: Date | string | null
  created_at: Date | string
  updated_at: Date | string
  created_by: UserBasic | null
}

function selectActions(sql: Sql) {
  return sql`
    select a.id, a.team_id, a.name, a.description, a.tags, a.post_to_slack, a.slack_message_format, a.steps, a.deleted,
           a.pinned_at, a.created_at, a.updated_at,
           (select ${userObject(sql)} from users u where u.id = a.created_by_id) as created_by
      from actions a`
}

export interface ActionListOptions {
  limit: number
  offset: number
  /** case-insensitive part of the name */
  search?: string
}

/** A page of the project's actions (not deleted), by name. */
export async function listActions(sql: Sql, teamId: number, o: ActionListOptions): Promise<{ count: number; rows: ActionRow[] }> {
  const search = o.search ? `%${o.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null
  const where = sql`a.team_id = ${teamId} and not a.deleted and (${search}::text is null or a.name ilike ${search})`
  const [[{ count }], rows] = await Promise.all([
    sql<{ count: number }[]>`select count(*)::int as count from actions a where ${where}`,
    sql<ActionRow[]>`${selectActions(sql)} where ${where} order by a.name, a.id limit ${o.limit} offset ${o.offset}`,
  ])
  return { count, rows }
}

/** An action of the project, deleted or not. */
export async function getAction(sql: Sql, teamId: number, id: number): Promise<ActionRow | null> {
  const [row] = await sql<ActionRow[]>`${selectActions(sql)} where a.team_id = ${teamId} and a.id = ${id}`
  return row ?? null
}

/** The id of another action of the project, not deleted, with this name (null: none). */
export async function actionNamed(tx: Sql, teamId: number, name: string, exceptId: number | null): Promise<number | null> {
  const [row] = await tx<{ id: number }[]>`
    select id from actions where team_id = ${teamId} and name = ${name} and not deleted and id <> ${exceptId ?? -1} limit 1`
  return row?.id ?? null
}

export async function createAction(tx: Sql, teamId: number, userId: number, input: ActionInput): Promise<number> {
  const [row] = await tx<{ id: number }[]>`
    insert into actions (team_id, name, description, tags, post_to_slack, slack_message_format, steps, deleted, pinned_at, created_by_id)
    values (${teamId}, ${input.name!}, ${input.description ?? ''}, ${tx.json(asJson(input.tags ?? []))}, ${input.post_to_slack ?? false},
            ${input.slack_message_format ?? ''}, ${tx.json(asJson(input.steps ?? []))}, ${input.deleted ?? false}, ${input.pinned_at ?? null},
            ${userId})
    returning id`
  return row.id
}

/** Writes the members `input` carries; false when the project has no such action. */
export async function updateAction(tx: Sql, teamId: number, id: number, input: ActionInput): Promise<boolean> {
  const has = (key: keyof ActionInput): boolean => input[key] !== undefined
  const rows = await tx`
    update actions set
      name = case when ${has('name')}::boolean then ${input.name ?? ''} else name end,
      description = case when ${has('description')}::boolean then ${input.description ?? ''} else description end,
      tags = case when ${has('tags')}::boolean then ${tx.json(asJson(input.tags ?? []))}::jsonb else tags end,
      post_to_slack = case when ${has('post_to_slack')}::boolean then ${input.post_to_slack ?? false} else post_to_slack end,
      slack_message_format = case when ${has('slack_message_format')}::boolean then ${input.slack_message_format ?? ''} else slack_message_format end,
      steps = case when ${has('steps')}::boolean then ${tx.json(asJson(input.steps ?? []))}::jsonb else steps end,
      deleted = case when ${has('deleted')}::boolean then ${input.deleted ?? false} else deleted end,
      pinned_at = case when ${has('pinned_at')}::boolean then ${input.pinned_at ?? null}::timestamptz else pinned_at end,
      updated_at = now()
    where team_id = ${teamId} and id = ${id}
    returning id`
  return rows.length > 0
}
