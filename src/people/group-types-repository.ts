// Group type mappings as admins see and change them (the learner allocates them: repository.ts).
import type { Sql } from 'postgres'

export interface GroupTypeRow {
  group_type: string
  group_type_index: number
  name_singular: string | null
  name_plural: string | null
  created_at: Date
}

export async function listGroupTypes(sql: Sql, teamId: number): Promise<GroupTypeRow[]> {
  return sql<GroupTypeRow[]>`
    select group_type, group_type_index, name_singular, name_plural, created_at
      from group_type_mappings where team_id = ${teamId} order by group_type_index`
}

/** Set the names given (undefined: unchanged); null when no type has that index. */
export async function renameGroupType(
  sql: Sql,
  teamId: number,
  index: number,
  names: { name_singular?: string | null; name_plural?: string | null },
): Promise<GroupTypeRow | null> {
  const [row] = await sql<GroupTypeRow[]>`
    update group_type_mappings
       set name_singular = case when ${names.name_singular !== undefined} then ${names.name_singular ?? null}::text else name_singular end,
           name_plural = case when ${names.name_plural !== undefined} then ${names.name_plural ?? null}::text else name_plural end
     where team_id = ${teamId} and group_type_index = ${index}
     returning group_type, group_type_index, name_singular, name_plural, created_at`
  return row ?? null
}

/**
 * Remove a type and everything learned under its index: its groups and its group property definitions. The index
 * is then free for the next new type events name. Under the learner's lock, so no batch allocates meanwhile.
 */
export async function deleteGroupType(
  tx: Sql,
  teamId: number,
  index: number,
): Promise<{ group_type: string; groups: number; definitions: number } | null> {
  const [mapping] = await tx<{ group_type: string }[]>`
    delete from group_type_mappings where team_id = ${teamId} and group_type_index = ${index} returning group_type`
  if (!mapping) return null
  const groups = await tx`delete from groups where team_id = ${teamId} and group_type_index = ${index}`
  const definitions = await tx`delete from property_definitions where team_id = ${teamId} and type = 'group' and group_type_index = ${index}`
  return { group_type: mapping.group_type, groups: groups.count, definitions: definitions.count }
}
