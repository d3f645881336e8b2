// Property definitions and (event, property) pairs in Postgres: the learner's upserts, and what the REST API
// reads and changes.
import type { Sql } from 'postgres'
import type { PropertyType } from './property-types'

export type PropertyKind = 'event' | 'person' | 'group' | 'session'

export interface PropertySighting {
  teamId: number
  kind: PropertyKind
  groupTypeIndex: number | null
  name: string
  type: PropertyType | null
}

export interface PairSighting {
  teamId: number
  event: string
  property: string
}

/** Rows per statement: a batch of events with many distinct keys is written in pieces of this size. */
const ROWS_PER_STATEMENT = 5000

function chunks<T>(rows: T[]): T[][] {
  const out: T[][] = []
  for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) out.push(rows.slice(i, i + ROWS_PER_STATEMENT))
  return out
}

/**
 * First sight creates the definition; a definition without a type takes the first type seen; a type, once set,
 * is kept (only the API changes it). Rows are sorted so that two processes upserting the same keys take their
 * locks in the same order.
 */
export async function recordPropertySightings(sql: Sql, sightings: PropertySighting[]): Promise<void> {
  const rows = sightings
    .map((s) => ({ team_id: s.teamId, type: s.kind, group_type_index: s.groupTypeIndex, name: s.name, property_type: s.type }))
    .sort((a, b) => a.team_id - b.team_id || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0) || (a.group_type_index ?? -1) - (b.group_type_index ?? -1) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  for (const chunk of chunks(rows)) {
    await sql`
      insert into property_definitions (team_id, type, group_type_index, name, property_type)
      select v.team_id, v.type, v.group_type_index, v.name, v.property_type
        from jsonb_to_recordset(${sql.json(chunk)}) as v(team_id int, type text, group_type_index smallint, name text, property_type text)
       where exists (select 1 from projects where id = v.team_id)
      on conflict (team_id, type, (coalesce(group_type_index, -1)), name) do update set property_type = excluded.property_type
       where property_definitions.property_type is null and excluded.property_type is not null`
  }
}

/** Which property was seen on which event: rows are only ever added. */
export async function recordPairSightings(sql: Sql, pairs: PairSighting[]): Promise<void> {
  const rows = pairs
    .map((p) => ({ team_id: p.teamId, event: p.event, property: p.property }))
    .sort((a, b) => a.team_id - b.team_id || (a.event < b.event ? -1 : a.event > b.event ? 1 : 0) || (a.property < b.property ? -1 : a.property > b.property ? 1 : 0))
  for (const chunk of chunks(rows)) {
    await sql`
      insert into event_properties (team_id, event, property)
      select v.team_id, v.event, v.property
        from jsonb_to_recordset(${sql.json(chunk)}) as v(team_id int, event text, property text)
       where exists (select 1 from projects where id = v.team_id)
      on conflict do nothing`
  }
}
