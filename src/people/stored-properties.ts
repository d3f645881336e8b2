// What /decide reads of persons and groups: the stored properties a flag needs, in one query.
import type { Sql } from 'postgres'

export interface StoredPropertiesRequest {
  teamId: number
  /** load the person of this distinct id, with its static cohorts (omit when no flag needs the person) */
  distinctId?: string
  /** load these groups: [group type index, group key] */
  groups?: [number, string][]
}

export interface StoredProperties {
  /** the person's properties; null when the distinct id has no person; undefined when not asked for */
  person: Record<string, unknown> | null | undefined
  /** by group type index: the group's properties, or null when no such group */
  groups: Map<number, Record<string, unknown> | null>
  /** the static cohorts the person belongs to (by person: every alias shares them); with the person */
  staticCohorts?: ReadonlySet<number>
}

export interface SizedProperties {
  value: Record<string, unknown> | null
  /** the bytes of its JSON text: what the parsed value costs in memory, roughly */
  bytes: number
}

export interface SizedPerson extends SizedProperties {
  staticCohorts: ReadonlySet<number>
}

const NO_COHORTS: ReadonlySet<number> = new Set()

/**
 * One round trip for everything a /decide request needs, each value with its size (for the cache). Throws
 * when Postgres cannot be reached (the caller then answers what needs no stored data, with
 * errorsWhileComputingFlags).
 */
export async function loadStoredPropertiesSized(
  sql: Sql,
  request: StoredPropertiesRequest,
): Promise<{ person: SizedPerson | undefined; groups: Map<number, SizedProperties> }> {
  const groups = request.groups ?? []
  const result = {
    person: request.distinctId === undefined ? undefined : ({ value: null, bytes: 0, staticCohorts: NO_COHORTS } as SizedPerson),
    groups: new Map<number, SizedProperties>(),
  }
  for (const [index] of groups) result.groups.set(index, { value: null, bytes: 0 })
  if (request.distinctId === undefined && groups.length === 0) return result
  // as text: parsing it here costs what the driver's parse would, and gives the size for free
  const rows = await sql<{ kind: string; type_index: number | null; properties: string; cohorts: number[] | null }[]>`
    select 'person' as kind, null::int as type_index, p.properties::text as properties,
           array(select m.cohort_id from cohort_people m where m.person_id = p.id) as cohorts
      from person_distinct_ids d join persons p on p.id = d.person_id
     where d.team_id = ${request.teamId} and d.distinct_id = ${request.distinctId ?? null}
       and ${request.distinctId !== undefined}
    union all
    select 'group', g.group_type_index::int, g.group_properties::text, null
      from groups g
      join jsonb_to_recordset(${sql.json(groups.map(([idx, key]) => ({ idx, key })))}) as wanted(idx int, key text)
        on g.group_type_index = wanted.idx and g.group_key = wanted.key
     where g.team_id = ${request.teamId}`
  for (const row of rows) {
    const sized = { value: JSON.parse(row.properties) as Record<string, unknown>, bytes: row.properties.length * 2 }
    if (row.kind === 'person') {
      const cohorts = row.cohorts ?? []
      result.person = { ...sized, bytes: sized.bytes + cohorts.length * 8, staticCohorts: cohorts.length ? new Set(cohorts.map(Number)) : NO_COHORTS }
    } else result.groups.set(row.type_index!, sized)
  }
  return result
}

/** The same, without sizes. */
export async function loadStoredProperties(sql: Sql, request: StoredPropertiesRequest): Promise<StoredProperties> {
  const loaded = await loadStoredPropertiesSized(sql, request)
  const groups = new Map<number, Record<string, unknown> | null>()
  for (const [index, g] of loaded.groups) groups.set(index, g.value)
  return { person: loaded.person?.value ?? (request.distinctId === undefined ? undefined : null), groups, staticCohorts: loaded.person?.staticCohorts }
}

/** The project's group types: index → name. */
export async function groupTypeMapping(sql: Sql, teamId: number): Promise<Map<number, string>> {
  const rows = await sql<{ group_type: string; group_type_index: number }[]>`
    select group_type, group_type_index from group_type_mappings where team_id = ${teamId} order by group_type_index`
  return new Map(rows.map((r) => [r.group_type_index, r.group_type]))
}
