// Persons, distinct ids, group types and groups in Postgres: what the learner reads and writes, and what
// the persons API lists. Bulk statements only: one per kind per batch, whatever the number of events.
import type { Sql } from 'postgres'
import { cancelledWithRequest } from '../db/cancel'
import { asJson } from '../db/postgres'
import { rowsThatFit } from '../http/pagination'
import { MAX_PERSON_PROPERTIES_SIZE, type Person } from './identity'
import { emailPattern, type PersonPropertyFilter } from './search'

/** The advisory lock (with the project id) under which a project's persons and group types change. */
export const PERSONS_LOCK = 0x70657273 // "pers"

interface PersonRow {
  id: number
  uuid: string
  properties: Record<string, unknown>
  is_identified: boolean
  created_at: Date
  distinct_ids: string[]
}

/**
 * The persons of these distinct ids, each once with all of its distinct ids (merges move them all). One row a
 * person: a join row per distinct id sent the person's properties once per id, so a person with 1,000 aliases
 * and 1 MB of properties cost a gigabyte to load for every later $set.
 */
export async function loadPersons(tx: Sql, teamId: number, distinctIds: string[]): Promise<Person[]> {
  if (distinctIds.length === 0) return []
  const rows = await tx<PersonRow[]>`
    select p.id, p.uuid, p.properties, p.is_identified, p.created_at,
           array(select d.distinct_id from person_distinct_ids d where d.person_id = p.id) as distinct_ids
      from persons p
     where p.id in (select wanted.person_id
                      from person_distinct_ids wanted
                     where wanted.team_id = ${teamId}
                       and wanted.distinct_id in (select jsonb_array_elements_text(${tx.json(distinctIds)})))`
  return rows.map((r) => ({
    id: r.id,
    uuid: r.uuid,
    properties: r.properties,
    isIdentified: r.is_identified,
    createdAt: r.created_at.getTime(),
    distinctIds: new Set(r.distinct_ids),
    changed: false,
  }))
}

/** Write what a batch did to persons: new persons, changed ones, re-pointed distinct ids, merged-away ones. */
export async function writePersons(
  tx: Sql,
  teamId: number,
  touched: Person[],
  assignments: [string, Person][],
): Promise<{ created: number; updated: number; merged: number; distinctIds: number }> {
  const created = touched.filter((p) => p.id === undefined && !p.mergedInto)
  const updated = touched.filter((p) => p.id !== undefined && p.changed && !p.mergedInto)
  const merged = touched.filter((p) => p.id !== undefined && p.mergedInto)
  if (created.length > 0) {
    const rows = created.map((p) => ({
      uuid: p.uuid,
      properties: p.properties,
      identified: p.isIdentified,
      created_at: new Date(p.createdAt).toISOString(),
    }))
    // "do update" so that the id comes back even if the row exists (a replayed batch)
    const inserted = await tx<{ id: number; uuid: string }[]>`
      insert into persons (uuid, team_id, properties, is_identified, created_at)
      select v.uuid, ${teamId}, v.properties, v.identified, v.created_at
        from jsonb_to_recordset(${tx.json(asJson(rows))}) as v(uuid uuid, properties jsonb, identified bool, created_at timestamptz)
      on conflict (uuid) do update set properties = excluded.properties, is_identified = excluded.is_identified
      returning id, uuid`
    const idByUuid = new Map(inserted.map((r) => [r.uuid, r.id]))
    for (const p of created) p.id = idByUuid.get(p.uuid)
  }
  if (updated.length > 0) {
    const rows = updated.map((p) => ({
      id: p.id,
      properties: p.properties,
      identified: p.isIdentified,
      created_at: new Date(p.createdAt).toISOString(),
    }))
    await tx`
      update persons p
         set properties = v.properties, is_identified = v.identified,
             created_at = least(p.created_at, v.created_at), version = p.version + 1
        from jsonb_to_recordset(${tx.json(asJson(rows))}) as v(id bigint, properties jsonb, identified bool, created_at timestamptz)
       where p.id = v.id`
  }
  const live = assignments.filter(([, p]) => !p.mergedInto && p.id !== undefined)
  if (live.length > 0) {
    const rows = live.map(([distinctId, p]) => ({ distinct_id: distinctId, person_id: p.id }))
    await tx`
      insert into person_distinct_ids (team_id, distinct_id, person_id)
      select ${teamId}, v.distinct_id, v.person_id
        from jsonb_to_recordset(${tx.json(asJson(rows))}) as v(distinct_id text, person_id bigint)
      on conflict (team_id, distinct_id) do update set person_id = excluded.person_id
       where person_distinct_ids.person_id <> excluded.person_id`
  }
  if (merged.length > 0) {
    // static cohort memberships follow the person a merged one went into (as PostHog's merge moves them)
    const moves: { src: number; dst: number }[] = []
    for (const p of merged) {
      let survivor = p.mergedInto!
      while (survivor.mergedInto) survivor = survivor.mergedInto
      if (survivor.id !== undefined) moves.push({ src: p.id!, dst: survivor.id })
    }
    if (moves.length > 0) {
      await tx`
        insert into cohort_people (cohort_id, person_id)
        select m.cohort_id, v.dst
          from jsonb_to_recordset(${tx.json(asJson(moves))}) as v(src bigint, dst bigint)
          join cohort_people m on m.person_id = v.src
        on conflict do nothing`
    }
    await tx`
      delete from persons
       where team_id = ${teamId} and id in (select jsonb_array_elements_text(${tx.json(merged.map((p) => p.id!))})::bigint)`
  }
  return { created: created.length, updated: updated.length, merged: merged.length, distinctIds: live.length }
}

/**
 * Record distinct ids seen on events as having no person (personless): each gets a mapping row with the next
 * version, so that the query API counts it as the person of PostHog's deterministic uuid for the id. An id that has
 * a person, or a personless row already, is left as it is: only a person's row (an $identify or alias that gives
 * the id a person later, with a higher version) may outrank it. Returns how many rows were written.
 */
export async function recordPersonless(tx: Sql, teamId: number, distinctIds: string[]): Promise<number> {
  if (distinctIds.length === 0) return 0
  const written = await tx`
    insert into personless_distinct_ids (team_id, distinct_id)
    select ${teamId}, v.id
      from jsonb_array_elements_text(${tx.json(distinctIds)}) as v(id)
     where not exists (select 1 from person_distinct_ids d where d.team_id = ${teamId} and d.distinct_id = v.id)
    on conflict (team_id, distinct_id) do nothing`
  return written.count
}

export async function loadGroupTypes(tx: Sql, teamId: number): Promise<Map<string, number>> {
  const rows = await tx<{ group_type: string; group_type_index: number }[]>`
    select group_type, group_type_index from group_type_mappings where team_id = ${teamId}`
  return new Map(rows.map((r) => [r.group_type, r.group_type_index]))
}

export async function addGroupTypes(tx: Sql, teamId: number, added: [string, number][]): Promise<void> {
  if (added.length === 0) return
  const rows = added.map(([type, index]) => ({ type, index }))
  await tx`
    insert into group_type_mappings (team_id, group_type, group_type_index)
    select ${teamId}, v.type, v.index from jsonb_to_recordset(${tx.json(asJson(rows))}) as v(type text, index int)
    on conflict do nothing`
}

export async function upsertGroups(tx: Sql, teamId: number, groups: { index: number; key: string; properties: Record<string, unknown> }[]): Promise<void> {
  if (groups.length === 0) return
  await tx`
    insert into groups (team_id, group_type_index, group_key, group_properties)
    select ${teamId}, v.index, v.key, v.properties
      from jsonb_to_recordset(${tx.json(asJson(groups))}) as v(index int, key text, properties jsonb)
    on conflict (team_id, group_type_index, group_key)
      do update set group_properties = case
                      when length((groups.group_properties || excluded.group_properties)::text) <= ${MAX_PERSON_PROPERTIES_SIZE}
                        then groups.group_properties || excluded.group_properties
                      else groups.group_properties end,
                    version = groups.version + 1`
}

// ---------------------------------------------------------------------------------------------------
// the persons API

export interface PersonListing {
  id: number
  uuid: string
  properties: Record<string, unknown>
  is_identified: boolean
  created_at: Date
  distinct_ids: string[]
}

/**
 * What a person costs a list page, in bytes (its properties as text, its distinct ids — at most `ids` of them —
 * and the rest of its answer), computed in Postgres so that the rows are only read once they fit the page.
 */
/** One property of these persons (by uuid) as text: strings as they are, other JSON as written; null when absent. */
export function personPropertyText(sql: Sql, teamId: number, uuids: readonly string[], key: string): Promise<{ uuid: string; value: string | null }[]> {
  return sql<{ uuid: string; value: string | null }[]>`
    select uuid::text as uuid, properties ->> ${key} as value
      from persons where team_id = ${teamId} and uuid = any(${uuids as string[]}::uuid[])`
}

/**
 * The most frequent values of a person property among the project's newest `personsRead` persons (text, cut to
 * `valueChars`), most frequent first, then alphabetical; `pattern`: an ILIKE pattern they must match (escape character `!`).
 */
export function personPropertyValues(
  sql: Sql,
  teamId: number,
  options: { key: string; pattern: string | null; valueChars: number; values: number; personsRead: number },
): Promise<{ name: string; n: number }[]> {
  return sql<{ name: string; n: number }[]>`
    select left(v, ${options.valueChars}) as name, count(*)::int as n
      from (select properties ->> ${options.key} as v from persons where team_id = ${teamId} order by id desc limit ${options.personsRead}) newest
     where v is not null ${options.pattern === null ? sql`` : sql`and v ilike ${options.pattern} escape '!'`}
     group by 1 order by n desc, name asc limit ${options.values}`
}

export function personListingBytes(sql: Sql, ids: number | null = null) {
  const idBytes = ids === null
    ? sql`(select coalesce(sum(octet_length(d.distinct_id) + 4), 0) from person_distinct_ids d where d.person_id = p.id)`
    : sql`(select coalesce(sum(octet_length(d.distinct_id) + 4), 0) from (select distinct_id from person_distinct_ids i where i.person_id = p.id order by distinct_id limit ${ids}) d)`
  return sql`(octet_length(p.properties::text) + ${idBytes} + 200)::float8`
}

export async function listPersons(
  sql: Sql,
  teamId: number,
  filter: { distinctId?: string; search?: string; properties?: PersonPropertyFilter[]; limit: number; offset: number; maxBytes?: number },
): Promise<{ count: number; rows: PersonListing[]; cut: boolean }> {
  const byId = filter.distinctId !== undefined
  let where = byId
    ? sql`p.id in (select person_id from person_distinct_ids where team_id = ${teamId} and distinct_id = ${filter.distinctId!})`
    : sql`p.team_id = ${teamId}`
  if (filter.search !== undefined) {
    // PostHog's search: a distinct id exactly, or a part of the email
    where = sql`${where} and p.team_id = ${teamId} and (
      p.id in (select person_id from person_distinct_ids where team_id = ${teamId} and distinct_id = ${filter.search})
      or p.properties->>'email' ilike ${emailPattern(filter.search)})`
  }
  for (const f of filter.properties ?? []) where = sql`${where} and p.properties->>${f.key} = any(${f.values}::text[])`
  const [{ count }] = await cancelledWithRequest(sql<{ count: number }[]>`select count(*)::int as count from persons p where ${where}`)
  // sizes first (cheap), then only the rows that fit the page's byte budget
  const sizes = await cancelledWithRequest(sql<{ bytes: number }[]>`
    select ${personListingBytes(sql)} as bytes
      from persons p
     where ${where}
     order by p.created_at desc, p.id desc
     limit ${filter.limit} offset ${filter.offset}`)
  const fit = rowsThatFit(sizes.map((r) => r.bytes), filter.limit, filter.maxBytes)
  const rows = fit === 0 ? [] : await cancelledWithRequest(sql<PersonListing[]>`
    select p.id, p.uuid, p.properties, p.is_identified, p.created_at,
           array(select distinct_id from person_distinct_ids d where d.person_id = p.id order by distinct_id) as distinct_ids
      from persons p
     where ${where}
     order by p.created_at desc, p.id desc
     limit ${fit} offset ${filter.offset}`)
  return { count, rows, cut: fit < sizes.length }
}
