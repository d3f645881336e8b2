// Event definitions in Postgres: the learner's upsert and what the REST API reads and changes.
import type { Sql } from 'postgres'
import { escapeLike } from './rules'
import type { DefinitionSighting } from './tracker'

export interface DefinitionRow {
  id: string
  name: string
  created_at: Date | null
  last_seen_at: Date | null
  last_updated_at: Date
  tags: string[]
  post_to_chat: boolean
  created_by_id: number | null
  created_by: { id: number; uuid: string; distinct_id: string; first_name: string; email: string; is_email_verified: boolean } | null
}

/** First sight creates the definition; later sightings advance last_seen_at. One statement per batch. */
export async function recordSightings(sql: Sql, sightings: DefinitionSighting[]): Promise<void> {
  if (sightings.length === 0) return
  const rows = sightings.map((s) => ({ team_id: s.teamId, name: s.name, seen_at: new Date(s.seenAt).toISOString() }))
  await sql`
    insert into event_definitions (team_id, name, created_at, last_seen_at)
    select v.team_id, v.name, v.seen_at, v.seen_at
      from jsonb_to_recordset(${sql.json(rows)}) as v(team_id int, name text, seen_at timestamptz)
     where exists (select 1 from projects where id = v.team_id)
    on conflict (team_id, name) do update set last_seen_at = excluded.last_seen_at
     where event_definitions.last_seen_at is null or event_definitions.last_seen_at < excluded.last_seen_at`
}

export type EventType = 'event' | 'event_custom' | 'event_posthog'
export type OrderKey = 'name' | 'last_seen_at' | 'last_seen_at::date' | 'created_at' | 'created_at::date'

export interface ListQuery {
  teamId: number
  limit: number
  offset: number
  /** every term must appear in the name (case-insensitive, wildcards literal) */
  terms: string[]
  eventType: EventType
  ordering: { key: OrderKey; descending: boolean }[]
}

function orderColumn(sql: Sql, key: OrderKey) {
  switch (key) {
    case 'name':
      return sql`name collate "C"`
    case 'last_seen_at':
      return sql`last_seen_at`
    case 'last_seen_at::date':
      return sql`(last_seen_at::date)`
    case 'created_at':
      return sql`created_at`
    case 'created_at::date':
      return sql`(created_at::date)`
  }
}

const SELECT = (sql: Sql) => sql`
  d.id, d.name, d.created_at, d.last_seen_at, d.last_updated_at, d.tags, d.post_to_chat, d.created_by_id,
  case when u.id is null then null else json_build_object('id', u.id, 'uuid', u.uuid, 'distinct_id', u.distinct_id,
       'first_name', u.first_name, 'email', u.email, 'is_email_verified', u.is_email_verified) end as created_by`

export async function listDefinitions(sql: Sql, q: ListQuery): Promise<{ count: number; rows: DefinitionRow[] }> {
  let where = sql`d.team_id = ${q.teamId}`
  for (const term of q.terms) where = sql`${where} and d.name ilike ${`%${escapeLike(term)}%`}`
  if (q.eventType === 'event_custom') where = sql`${where} and d.name not like '$%'`
  if (q.eventType === 'event_posthog') where = sql`${where} and d.name like '$%'`

  // PostHog's rules: an explicit ordering as given; by default the newest day first; shortest names first
  // when searching without one; name (byte order) always last as the tiebreaker; NULLS FIRST ascending.
  const ordering = [...q.ordering]
  if (ordering.length === 0) ordering.push({ key: 'last_seen_at::date', descending: true })
  const parts = []
  if (q.ordering.length === 0 && q.terms.length > 0) parts.push(sql`length(d.name) asc`)
  for (const o of ordering) {
    const column = orderColumn(sql, o.key)
    if (o.key === 'name') parts.push(o.descending ? sql`${column} desc` : sql`${column} asc`)
    else parts.push(o.descending ? sql`${column} desc nulls last` : sql`${column} asc nulls first`)
  }
  if (!ordering.some((o) => o.key === 'name')) parts.push(sql`name collate "C" asc`)
  const orderBy = parts.reduce((acc, part) => sql`${acc}, ${part}`)

  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from event_definitions d where ${where}`
  const rows = await sql<DefinitionRow[]>`
    select ${SELECT(sql)} from event_definitions d left join users u on u.id = d.created_by_id
     where ${where} order by ${orderBy} limit ${q.limit} offset ${q.offset}`
  return { count, rows }
}

export async function getDefinition(sql: Sql, teamId: number, id: string): Promise<DefinitionRow | null> {
  const [row] = await sql<DefinitionRow[]>`
    select ${SELECT(sql)} from event_definitions d left join users u on u.id = d.created_by_id
     where d.team_id = ${teamId} and d.id = ${id}`
  return row ?? null
}

export interface DefinitionChanges {
  name?: string
  created_at?: Date | null
  last_seen_at?: Date | null
  tags?: string[]
  post_to_chat?: boolean
}

/** Apply the changes; null when no such definition. Throws a unique violation when the name is taken. */
export async function updateDefinition(sql: Sql, teamId: number, id: string, c: DefinitionChanges): Promise<DefinitionRow | null> {
  const [updated] = await sql<{ id: string }[]>`
    update event_definitions set
      name = ${c.name !== undefined ? c.name : sql`name`},
      created_at = ${c.created_at !== undefined ? c.created_at : sql`created_at`},
      last_seen_at = ${c.last_seen_at !== undefined ? c.last_seen_at : sql`last_seen_at`},
      tags = ${c.tags !== undefined ? sql`array(select jsonb_array_elements_text(${sql.json(c.tags)}))` : sql`tags`},
      post_to_chat = ${c.post_to_chat !== undefined ? c.post_to_chat : sql`post_to_chat`},
      last_updated_at = now()
    where team_id = ${teamId} and id = ${id}
    returning id`
  return updated ? getDefinition(sql, teamId, id) : null
}

export async function deleteDefinition(sql: Sql, teamId: number, id: string): Promise<boolean> {
  const rows = await sql`delete from event_definitions where team_id = ${teamId} and id = ${id} returning id`
  return rows.length > 0
}
