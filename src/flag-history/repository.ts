// A flag's recorded changes (written by the feature_flag_history trigger, sql/postgres/0008_console.sql).
import type { Sql } from 'postgres'

export interface FlagChangeRow {
  id: string
  activity: 'created' | 'updated' | 'deleted' | 'restored'
  flagId: number
  key: string
  version: number
  changes: { field: string; before: unknown; after: unknown }[]
  user: { id: number; email: string; first_name: string } | null
  createdAt: Date
}

export async function flagExists(sql: Sql, teamId: number, flagId: number): Promise<boolean> {
  const [row] = await sql`select 1 from feature_flags where team_id = ${teamId} and id = ${flagId}`
  return Boolean(row)
}

/** Newest first; one more than `limit` tells whether a next page exists. */
export async function flagChanges(sql: Sql, teamId: number, flagId: number, limit: number, offset: number): Promise<FlagChangeRow[]> {
  return sql<FlagChangeRow[]>`
    select c.id::text as id, c.activity, c.flag_id as "flagId", f.key, c.version, c.changes, c.created_at as "createdAt",
           case when u.id is null then null else json_build_object('id', u.id, 'email', u.email, 'first_name', u.first_name) end as user
    from feature_flag_changes c
    join feature_flags f on f.id = c.flag_id
    left join users u on u.id = c.changed_by_id
    where c.team_id = ${teamId} and c.flag_id = ${flagId}
    order by c.id desc
    limit ${limit} offset ${offset}`
}
