// Property definitions and (event, property) pairs in Postgres: the learner's upserts, and what the REST API
// reads and changes.
import type { Sql } from 'postgres'
import type { PropertyType } from './property-types'
import type { UserBasic } from '../projects/users'
import { nameMatches, userJson } from './repository'
import type { Curation } from './rules'

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

/** How many property definitions of a type (event, person, group: every group type together) the project has. */
export async function countPropertyDefinitions(sql: Sql, teamId: number, kind: PropertyKind): Promise<number> {
  const [{ count }] = await sql<{ count: number }[]>`
    select count(*)::int as count from property_definitions where team_id = ${teamId} and type = ${kind}`
  return count
}

/** The key of a property definition within its project and type: group type index and name. */
export const propertyKey = (groupTypeIndex: number | null, name: string) => `${groupTypeIndex ?? -1}\u0000${name}`

/** Of the names given, the keys (propertyKey) of those the project has a definition of this type for. */
export async function existingPropertyKeys(sql: Sql, teamId: number, kind: PropertyKind, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set()
  const rows = await sql<{ group_type_index: number | null; name: string }[]>`
    select group_type_index, name from property_definitions
     where team_id = ${teamId} and type = ${kind} and name = any(${sql.array(names)}::text[])`
  return new Set(rows.map((r) => propertyKey(r.group_type_index, r.name)))
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

export interface PropertyRow extends Curation {
  id: string
  name: string
  type: PropertyKind
  group_type_index: number | null
  property_type: PropertyType | null
  is_numerical: boolean
  description: string
  tags: string[]
  updated_at: Date | null
  updated_by_id: number | null
  verified_by: UserBasic | null
  updated_by: UserBasic | null
  /** null unless the list was asked about events */
  is_seen_on_filtered_events: boolean | null
}

/** Names a type=event list never shows: what ingestion keeps apart from event properties. */
export const HIDDEN_EVENT_PROPERTIES = [
  'distinct_id', '$set', '$set_once', '$groups', '$group_type', '$group_key', '$group_set',
  '$group_0', '$group_1', '$group_2', '$group_3', '$group_4',
]

export interface PropertyListQuery {
  teamId: number
  kind: PropertyKind
  groupTypeIndex: number | null
  limit: number
  offset: number
  terms: string[]
  /** exact names (`properties=a,b`) */
  names: string[] | null
  numericalOnly: boolean
  /** true: only $feature/* names; false: none of them */
  featureFlags: boolean | null
  /** event names the properties are checked against (is_seen_on_filtered_events) */
  eventNames: string[] | null
  onlySeenOnEvents: boolean
  excluded: string[]
  excludeHidden: boolean
}

const SELECT_PROPERTY = (sql: Sql) => sql`
  p.id, p.name, p.type, p.group_type_index, p.property_type, p.is_numerical, p.description, p.tags,
  p.verified, p.verified_at, p.verified_by_id, p.hidden, p.updated_at, p.updated_by_id,
  ${userJson(sql, 'vu')} as verified_by, ${userJson(sql, 'uu')} as updated_by`
const FROM_PROPERTY = (sql: Sql) => sql`
  property_definitions p left join users vu on vu.id = p.verified_by_id left join users uu on uu.id = p.updated_by_id`

export async function listProperties(sql: Sql, q: PropertyListQuery): Promise<{ count: number; rows: PropertyRow[] }> {
  const seen = q.eventNames
    ? sql`exists (select 1 from event_properties ep
                   where ep.team_id = p.team_id and ep.property = p.name and ep.event = any(${sql.array(q.eventNames)}::text[]))`
    : sql`null::boolean`
  let where = sql`p.team_id = ${q.teamId} and p.type = ${q.kind} and coalesce(p.group_type_index, -1) = ${q.groupTypeIndex ?? -1}
    and ${nameMatches(sql, sql`p.name`, q.terms)}`
  if (q.kind === 'event') where = sql`${where} and not (p.name = any(${sql.array(HIDDEN_EVENT_PROPERTIES)}::text[]))`
  if (q.names) where = sql`${where} and p.name = any(${sql.array(q.names)}::text[])`
  if (q.numericalOnly) where = sql`${where} and p.is_numerical and p.name not in ('distinct_id', 'timestamp')`
  if (q.featureFlags === true) where = sql`${where} and p.name like '$feature/%'`
  if (q.featureFlags === false) where = sql`${where} and p.name not like '$feature/%'`
  if (q.excluded.length > 0) where = sql`${where} and not (p.name = any(${sql.array(q.excluded)}::text[]))`
  if (q.excludeHidden) where = sql`${where} and not p.hidden`
  if (q.eventNames && q.onlySeenOnEvents) where = sql`${where} and ${seen}`

  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from property_definitions p where ${where}`
  const rows = await sql<PropertyRow[]>`
    select ${SELECT_PROPERTY(sql)}, ${seen} as is_seen_on_filtered_events
      from ${FROM_PROPERTY(sql)}
     where ${where}
     order by is_seen_on_filtered_events desc, p.verified desc, p.name collate "C" asc, p.id
     limit ${q.limit} offset ${q.offset}`
  return { count, rows }
}

export async function getProperty(sql: Sql, teamId: number, id: string): Promise<PropertyRow | null> {
  const [row] = await sql<PropertyRow[]>`
    select ${SELECT_PROPERTY(sql)}, null::boolean as is_seen_on_filtered_events
      from ${FROM_PROPERTY(sql)} where p.team_id = ${teamId} and p.id = ${id}`
  return row ?? null
}

export interface PropertyChanges extends Partial<Curation> {
  description?: string
  tags?: string[]
  /** undefined: unchanged; null: no type */
  property_type?: PropertyType | null
}

/** Apply the changes (stamping who and when); null when no such definition. */
export async function updateProperty(sql: Sql, teamId: number, id: string, userId: number, c: PropertyChanges): Promise<PropertyRow | null> {
  const [updated] = await sql<{ id: string }[]>`
    update property_definitions set
      description = ${c.description !== undefined ? c.description : sql`description`},
      tags = ${c.tags !== undefined ? sql`${sql.array(c.tags)}::text[]` : sql`tags`},
      property_type = ${c.property_type !== undefined ? sql`${c.property_type}::text` : sql`property_type`},
      verified = ${c.verified !== undefined ? c.verified : sql`verified`},
      verified_at = ${c.verified_at !== undefined ? c.verified_at : sql`verified_at`},
      verified_by_id = ${c.verified_by_id !== undefined ? c.verified_by_id : sql`verified_by_id`},
      hidden = ${c.hidden !== undefined ? c.hidden : sql`hidden`},
      updated_at = now(),
      updated_by_id = ${userId}
    where team_id = ${teamId} and id = ${id}
    returning id`
  return updated ? getProperty(sql, teamId, id) : null
}

export async function deleteProperty(sql: Sql, teamId: number, id: string): Promise<boolean> {
  const rows = await sql`delete from property_definitions where team_id = ${teamId} and id = ${id} returning id`
  return rows.length > 0
}

/** Of `events`, those on which `property` has been seen in the project. */
export async function eventsSeenWith(sql: Sql, teamId: number, events: string[], property: string): Promise<Set<string>> {
  if (events.length === 0) return new Set()
  const rows = await sql<{ event: string }[]>`
    select event from event_properties
     where team_id = ${teamId} and property = ${property} and event = any(${sql.array(events)}::text[])`
  return new Set(rows.map((r) => r.event))
}
