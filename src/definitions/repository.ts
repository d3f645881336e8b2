// Event definitions in Postgres: the learner's upsert and what the REST API reads and changes. The SQL pieces
// both kinds of definition use (the user object, name search, bulk tags) are here too.
import type { UserBasic } from '../projects/users'
import type { Sql } from 'postgres'
import { escapeLike, type Curation, type TagAction } from './rules'
import type { DefinitionSighting } from './tracker'

export interface DefinitionRow extends Curation {
  id: string
  name: string
  created_at: Date | null
  last_seen_at: Date | null
  last_updated_at: Date
  tags: string[]
  post_to_chat: boolean
  description: string
  created_by_id: number | null
  created_by: UserBasic | null
  verified_by: UserBasic | null
}

/** First sight creates the definition; later sightings advance last_seen_at. One statement per batch. */
export async function recordSightings(sql: Sql, sightings: DefinitionSighting[]): Promise<void> {
  if (sightings.length === 0) return
  const rows = sightings.map((s) => ({ team_id: s.teamId, name: s.name, seen_at: new Date(s.seenAt).toISOString() }))
  // A definition created through the API (last_seen_at null) keeps its row and id and gets its first sighting.
  await sql`
    insert into event_definitions (team_id, name, created_at, last_seen_at)
    select v.team_id, v.name, v.seen_at, v.seen_at
      from jsonb_to_recordset(${sql.json(rows)}) as v(team_id int, name text, seen_at timestamptz)
     where exists (select 1 from projects where id = v.team_id)
    on conflict (team_id, name) do update set last_seen_at = excluded.last_seen_at
     where event_definitions.last_seen_at is null or event_definitions.last_seen_at < excluded.last_seen_at`
}

/** How many event definitions the project has (what its cap counts). */
export async function countEventDefinitions(sql: Sql, teamId: number): Promise<number> {
  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from event_definitions where team_id = ${teamId}`
  return count
}

/** Of `names`, those the project has a definition for. */
export async function existingEventNames(sql: Sql, teamId: number, names: string[]): Promise<Set<string>> {
  if (names.length === 0) return new Set()
  const rows = await sql<{ name: string }[]>`
    select name from event_definitions where team_id = ${teamId} and name = any(${sql.array(names)}::text[])`
  return new Set(rows.map((r) => r.name))
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
  excludeHidden?: boolean
}

/** A user as PostHog's UserBasic renders one, or null; `alias` is the joined users row. */
export function userJson(sql: Sql, alias: string) {
  const u = sql(alias)
  return sql`case when ${u}.id is null then null else json_build_object('id', ${u}.id, 'uuid', ${u}.uuid,
    'distinct_id', ${u}.distinct_id, 'first_name', ${u}.first_name, 'email', ${u}.email,
    'is_email_verified', ${u}.is_email_verified) end`
}

/** Every term appears in `column`, case-insensitively, LIKE wildcards taken literally. */
export function nameMatches(sql: Sql, column: ReturnType<Sql>, terms: string[]) {
  return terms.reduce((where, term) => sql`${where} and ${column} ilike ${`%${escapeLike(term)}%`}`, sql`true`)
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
  d.description, d.verified, d.verified_at, d.verified_by_id, d.hidden,
  ${userJson(sql, 'cu')} as created_by, ${userJson(sql, 'vu')} as verified_by`
const FROM = (sql: Sql) => sql`
  event_definitions d left join users cu on cu.id = d.created_by_id left join users vu on vu.id = d.verified_by_id`

export async function listDefinitions(sql: Sql, q: ListQuery): Promise<{ count: number; rows: DefinitionRow[] }> {
  let where = sql`d.team_id = ${q.teamId} and ${nameMatches(sql, sql`d.name`, q.terms)}`
  if (q.eventType === 'event_custom') where = sql`${where} and d.name not like '$%'`
  if (q.eventType === 'event_posthog') where = sql`${where} and d.name like '$%'`
  if (q.excludeHidden) where = sql`${where} and not d.hidden`

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
    select ${SELECT(sql)} from ${FROM(sql)} where ${where} order by ${orderBy} limit ${q.limit} offset ${q.offset}`
  return { count, rows }
}

export async function getDefinition(sql: Sql, teamId: number, id: string): Promise<DefinitionRow | null> {
  const [row] = await sql<DefinitionRow[]>`select ${SELECT(sql)} from ${FROM(sql)} where d.team_id = ${teamId} and d.id = ${id}`
  return row ?? null
}

export async function getDefinitionByName(sql: Sql, teamId: number, name: string): Promise<DefinitionRow | null> {
  const [row] = await sql<DefinitionRow[]>`select ${SELECT(sql)} from ${FROM(sql)} where d.team_id = ${teamId} and d.name = ${name}`
  return row ?? null
}

export interface NewDefinition extends Curation {
  name: string
  description: string
  tags: string[]
  post_to_chat: boolean
  created_by_id: number
}

/** A definition ahead of ingestion (never seen: created_at and last_seen_at null). Throws a unique violation when the name is taken. */
export async function createDefinition(sql: Sql, teamId: number, d: NewDefinition): Promise<DefinitionRow> {
  const [{ id }] = await sql<{ id: string }[]>`
    insert into event_definitions (team_id, name, created_at, last_seen_at, description, tags, post_to_chat, created_by_id,
                                   verified, verified_at, verified_by_id, hidden)
    values (${teamId}, ${d.name}, null, null, ${d.description}, ${sql.array(d.tags)}::text[], ${d.post_to_chat}, ${d.created_by_id},
            ${d.verified}, ${d.verified_at}, ${d.verified_by_id}, ${d.hidden})
    returning id`
  return (await getDefinition(sql, teamId, id))!
}

export interface DefinitionChanges extends Partial<Curation> {
  name?: string
  created_at?: Date | null
  last_seen_at?: Date | null
  tags?: string[]
  post_to_chat?: boolean
  description?: string
}

/** Apply the changes; null when no such definition. Throws a unique violation when the name is taken. */
export async function updateDefinition(sql: Sql, teamId: number, id: string, c: DefinitionChanges): Promise<DefinitionRow | null> {
  const [updated] = await sql<{ id: string }[]>`
    update event_definitions set
      name = ${c.name !== undefined ? c.name : sql`name`},
      created_at = ${c.created_at !== undefined ? c.created_at : sql`created_at`},
      last_seen_at = ${c.last_seen_at !== undefined ? c.last_seen_at : sql`last_seen_at`},
      tags = ${c.tags !== undefined ? sql`${sql.array(c.tags)}::text[]` : sql`tags`},
      post_to_chat = ${c.post_to_chat !== undefined ? c.post_to_chat : sql`post_to_chat`},
      description = ${c.description !== undefined ? c.description : sql`description`},
      verified = ${c.verified !== undefined ? c.verified : sql`verified`},
      verified_at = ${c.verified_at !== undefined ? c.verified_at : sql`verified_at`},
      verified_by_id = ${c.verified_by_id !== undefined ? c.verified_by_id : sql`verified_by_id`},
      hidden = ${c.hidden !== undefined ? c.hidden : sql`hidden`},
      last_updated_at = now()
    where team_id = ${teamId} and id = ${id}
    returning id`
  return updated ? getDefinition(sql, teamId, id) : null
}

export async function deleteDefinition(sql: Sql, teamId: number, id: string): Promise<boolean> {
  const rows = await sql`delete from event_definitions where team_id = ${teamId} and id = ${id} returning id`
  return rows.length > 0
}

/** Add, remove or set tags on the project's definitions among `ids` (UUIDs); the rows changed, with their tags. */
export async function bulkUpdateTags(
  sql: Sql,
  table: 'event_definitions' | 'property_definitions',
  teamId: number,
  ids: string[],
  action: TagAction,
  tags: string[],
  userId: number,
): Promise<{ id: string; tags: string[] }[]> {
  if (ids.length === 0) return []
  const given = sql`${sql.array(tags)}::text[]`
  const next =
    action === 'set'
      ? given
      : action === 'add'
        ? sql`array(select distinct t from unnest(tags || ${given}) as t)`
        : sql`array(select t from unnest(tags) as t where t <> all(${given}))`
  const stamp = table === 'event_definitions' ? sql`last_updated_at = now()` : sql`updated_at = now(), updated_by_id = ${userId}`
  return sql<{ id: string; tags: string[] }[]>`
    update ${sql(table)} set tags = ${next}, ${stamp}
     where team_id = ${teamId} and id = any(${sql.array(ids)}::uuid[])
    returning id, tags`
}
