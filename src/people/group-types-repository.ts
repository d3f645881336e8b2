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
 * is then free for the next new type events name, but not for this one: it is blocked (blockGroupType). Under the
 * learner's lock, so no batch allocates meanwhile.
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
  await blockGroupType(tx, teamId, mapping.group_type)
  return { group_type: mapping.group_type, groups: groups.count, definitions: definitions.count }
}

/** Blocked names kept a project: the newest; an older one past it may be taken again by events. */
export const MAX_BLOCKED_GROUP_TYPES = 1000

export interface BlockedGroupTypeRow {
  group_type: string
  blocked_at: Date
}

async function blockGroupType(tx: Sql, teamId: number, groupType: string): Promise<void> {
  await tx`
    insert into group_types_blocked (team_id, group_type) values (${teamId}, ${groupType})
    on conflict (team_id, group_type) do update set blocked_at = now()`
  await tx`
    delete from group_types_blocked
     where team_id = ${teamId}
       and group_type in (select group_type from group_types_blocked where team_id = ${teamId}
                           order by blocked_at desc, group_type offset ${MAX_BLOCKED_GROUP_TYPES})`
}

export async function listBlockedGroupTypes(sql: Sql, teamId: number): Promise<BlockedGroupTypeRow[]> {
  return sql<BlockedGroupTypeRow[]>`
    select group_type, blocked_at from group_types_blocked where team_id = ${teamId} order by blocked_at desc, group_type`
}

/** False when the name was not blocked. */
export async function unblockGroupType(sql: Sql, teamId: number, groupType: string): Promise<boolean> {
  const result = await sql`delete from group_types_blocked where team_id = ${teamId} and group_type = ${groupType}`
  return result.count > 0
}

/** Which of these names (new to the project) are blocked: what the learner must not allocate. */
export async function blockedAmong(tx: Sql, teamId: number, names: readonly string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set()
  const rows = await tx<{ group_type: string }[]>`
    select group_type from group_types_blocked where team_id = ${teamId} and group_type = any(${tx.array([...names])}::text[])`
  return new Set(rows.map((r) => r.group_type))
}
