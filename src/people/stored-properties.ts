// What /decide reads of persons and groups: the stored properties a flag needs, in one query.
import type { Sql } from 'postgres'

export interface StoredPropertiesRequest {
  teamId: number
  /** load the person of this distinct id (omit when no flag needs stored person properties) */
  distinctId?: string
  /** load these groups: [group type index, group key] */
  groups?: [number, string][]
  /** also load the ids of the static cohorts the person belongs to (by person: every alias shares them) */
  staticCohorts?: boolean
}

export interface StoredProperties {
  /** the person's properties; null when the distinct id has no person; undefined when not asked for */
  person: Record<string, unknown> | null | undefined
  /** by group type index: the group's properties, or null when no such group */
  groups: Map<number, Record<string, unknown> | null>
  /** the static cohorts the person belongs to, when asked for (empty when the distinct id has no person) */
  staticCohorts?: Set<number>
}

/**
 * One round trip for everything a /decide request needs. Throws when Postgres cannot be reached (the caller
 * then answers what needs no stored data, with errorsWhileComputingFlags).
 */
export async function loadStoredProperties(sql: Sql, request: StoredPropertiesRequest): Promise<StoredProperties> {
  const groups = request.groups ?? []
  const result: StoredProperties = { person: request.distinctId === undefined ? undefined : null, groups: new Map() }
  const withCohorts = request.staticCohorts === true && request.distinctId !== undefined
  if (withCohorts) result.staticCohorts = new Set()
  for (const [index] of groups) result.groups.set(index, null)
  if (request.distinctId === undefined && groups.length === 0) return result
  const rows = await sql<{ kind: string; type_index: number | null; properties: Record<string, unknown>; cohorts: number[] | null }[]>`
    select 'person' as kind, null::int as type_index, p.properties,
           case when ${withCohorts}::boolean then array(select m.cohort_id from cohort_people m where m.person_id = p.id) end as cohorts
      from person_distinct_ids d join persons p on p.id = d.person_id
     where d.team_id = ${request.teamId} and d.distinct_id = ${request.distinctId ?? null}
       and ${request.distinctId !== undefined}
    union all
    select 'group', g.group_type_index::int, g.group_properties, null
      from groups g
      join jsonb_to_recordset(${sql.json(groups.map(([idx, key]) => ({ idx, key })))}) as wanted(idx int, key text)
        on g.group_type_index = wanted.idx and g.group_key = wanted.key
     where g.team_id = ${request.teamId}`
  for (const row of rows) {
    if (row.kind === 'person') {
      result.person = row.properties
      if (withCohorts && row.cohorts) result.staticCohorts = new Set(row.cohorts)
    } else result.groups.set(row.type_index!, row.properties)
  }
  return result
}

/** The project's group types: index → name. */
export async function groupTypeMapping(sql: Sql, teamId: number): Promise<Map<number, string>> {
  const rows = await sql<{ group_type: string; group_type_index: number }[]>`
    select group_type, group_type_index from group_type_mappings where team_id = ${teamId} order by group_type_index`
  return new Map(rows.map((r) => [r.group_type_index, r.group_type]))
}
