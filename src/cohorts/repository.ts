// Cohorts and static cohort members in Postgres. A cohort write bumps the project's flag version in the same
// transaction (and sends NOTIFY on a real Postgres): the flag cache of every process holds the cohorts flags use.
// Member writes need no bump: /decide looks a person's static cohorts up with the person, per request.
import type { Sql } from 'postgres'
import { asJson, inTransaction } from '../db/postgres'
import { errors } from '../http/errors'
import { bumpFlagVersion, userObject } from '../flags/repository'
import { COHORT_VALUES_PATH } from '../flags/references'
import { personListingBytes, type PersonListing } from '../people/repository'
import { rowsThatFit } from '../http/pagination'
import type { UserBasic } from '../projects/users'
import { COHORT_LIMITS, type CohortInput } from './validation'
import type { CsvIdKind } from './csv'

export interface CohortRow {
  id: number
  team_id: number
  name: string | null
  description: string
  filters: Record<string, unknown> | null
  groups: unknown[]
  is_static: boolean
  deleted: boolean
  is_calculating: boolean
  count: number | null
  version: number
  created_at: Date | string
  updated_at: Date | string
  created_by: UserBasic | null
}

function selectCohorts(sql: Sql) {
  return sql`
    select c.id, c.team_id, c.name, c.description, c.filters, c.groups, c.is_static, c.deleted, c.is_calculating,
           c.count, c.version, c.created_at, c.updated_at,
           (select ${userObject(sql)} from users u where u.id = c.created_by_id) as created_by
      from cohorts c`
}

export interface CohortListOptions {
  limit: number
  offset: number
  /** case-insensitive substring of the name */
  search?: string
  type?: 'static' | 'dynamic'
  createdById?: number
}

export async function listCohorts(sql: Sql, teamId: number, o: CohortListOptions): Promise<{ count: number; rows: CohortRow[] }> {
  const search = o.search ? `%${o.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null
  const isStatic = o.type === undefined ? null : o.type === 'static'
  const where = sql`
    c.team_id = ${teamId} and not c.deleted
    and (${search}::text is null or c.name ilike ${search})
    and (${isStatic}::boolean is null or c.is_static = ${isStatic})
    and (${o.createdById ?? null}::int is null or c.created_by_id = ${o.createdById ?? null})`
  const [[{ count }], rows] = await Promise.all([
    sql<{ count: number }[]>`select count(*)::int as count from cohorts c where ${where}`,
    sql<CohortRow[]>`${selectCohorts(sql)} where ${where} order by c.created_at desc, c.id desc limit ${o.limit} offset ${o.offset}`,
  ])
  return { count, rows }
}

/** A cohort of the project, deleted or not. */
export async function getCohort(sql: Sql, teamId: number, id: number): Promise<CohortRow | null> {
  const [row] = await sql<CohortRow[]>`${selectCohorts(sql)} where c.team_id = ${teamId} and c.id = ${id}`
  return row ?? null
}

/** Make the stored count of a static cohort its number of members. */
async function recount(tx: Sql, cohortId: number): Promise<void> {
  await tx`update cohorts set count = (select count(*) from cohort_people where cohort_id = ${cohortId}) where id = ${cohortId} and is_static`
}

/** A dynamic cohort's size as last computed (cohorts/service.ts dynamicCount); its next edit clears it. */
export async function storeDynamicCount(sql: Sql, cohortId: number, count: number): Promise<void> {
  await sql`update cohorts set count = ${count} where id = ${cohortId} and not is_static and count is distinct from ${count}`
}

/** Insert a cohort; `tx` holds the project's write lock (withProjectWriteLock). */
export async function createCohort(tx: Sql, teamId: number, userId: number, input: CohortInput, notify: boolean): Promise<number> {
  await bumpFlagVersion(tx, teamId, notify)
  const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from cohorts where team_id = ${teamId} and not deleted`
  if (n >= COHORT_LIMITS.perProject) {
    throw errors.validation('limit_exceeded', `A project may have at most ${COHORT_LIMITS.perProject} cohorts: delete some first.`, null)
  }
  const isStatic = input.is_static ?? false
  const [row] = await tx<{ id: number }[]>`
    insert into cohorts (team_id, name, description, filters, groups, is_static, deleted, count, created_by_id)
    values (${teamId}, ${input.name ?? null}, ${input.description ?? ''},
            ${input.filters ? tx.json(asJson(input.filters)) : null}, ${tx.json(asJson(input.groups ?? []))},
            ${isStatic}, ${input.deleted ?? false}, ${isStatic ? 0 : null}, ${userId})
    returning id`
  if (isStatic && input.personIds && input.personIds.length > 0) {
    await addByPersonUuids(tx, teamId, row.id, input.personIds)
    await recount(tx, row.id)
  }
  return row.id
}

/** Write the fields given; `tx` holds the project's write lock, and the caller checked the write under it. */
export async function updateCohort(tx: Sql, teamId: number, id: number, input: CohortInput, notify: boolean): Promise<boolean> {
  await bumpFlagVersion(tx, teamId, notify)
  const filters = input.filters === undefined || input.filters === null ? null : tx.json(asJson(input.filters))
  const rows = await tx`
    update cohorts set
      name = case when ${input.name !== undefined}::boolean then ${input.name ?? null}::text else name end,
      description = coalesce(${input.description ?? null}::text, description),
      filters = case when ${input.filters !== undefined}::boolean then ${filters}::jsonb else filters end,
      groups = coalesce(${input.groups === undefined ? null : tx.json(asJson(input.groups))}::jsonb, groups),
      is_static = coalesce(${input.is_static ?? null}::boolean, is_static),
      deleted = coalesce(${input.deleted ?? null}::boolean, deleted),
      version = version + 1,
      updated_at = now()
    where team_id = ${teamId} and id = ${id}
    returning id`
  // a static cohort counts its members; a dynamic one has no count (PostHog's is computed in ClickHouse)
  await tx`
    update cohorts set count = case when is_static then (select count(*) from cohort_people where cohort_id = ${id})::int end
     where id = ${id}`
  return rows.length > 0
}

// ---------------------------------------------------------------------------------------------------
// static members

const CHUNK = 5000

/** Add the project's persons with these uuids; returns how many persons matched. */
async function addByPersonUuids(tx: Sql, teamId: number, cohortId: number, uuids: string[]): Promise<number> {
  let matched = 0
  for (let i = 0; i < uuids.length; i += CHUNK) {
    const [{ n }] = await tx<{ n: number }[]>`
      with found as (
        select p.id from persons p where p.team_id = ${teamId} and p.uuid = any(${tx.array(uuids.slice(i, i + CHUNK))}::uuid[])
      ), added as (
        insert into cohort_people (cohort_id, person_id) select ${cohortId}, id from found on conflict do nothing
      )
      select count(*)::int as n from found`
    matched += n
  }
  return matched
}

/** Add members by person uuid (answers how many persons matched; unknown uuids are ignored). */
export async function addMembers(sql: Sql, teamId: number, cohortId: number, uuids: string[]): Promise<number> {
  return sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    const matched = await addByPersonUuids(tx, teamId, cohortId, uuids)
    await recount(tx, cohortId)
    return matched
  })
}

/** Add the persons a CSV names (distinct ids of any of their aliases, person uuids or emails); unknown ids are ignored. */
/** How many skipped ids an upload's answer names (the count is of all of them). */
export const CSV_SKIPPED_NAMED = 100

/** A person uuid as Postgres writes it (lower case, dashed), or null when the text is not one. */
function canonicalUuid(text: string): string | null {
  const hex = text.replace(/-/g, '').toLowerCase()
  if (!/^[0-9a-f]{32}$/.test(hex) || !/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(text)) return null
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * Add the persons a CSV names (distinct ids of any of their aliases, person uuids or emails). Ids that name no
 * person are skipped, and said: their number and the first CSV_SKIPPED_NAMED of them, as written.
 */
export async function addMembersFromCsv(sql: Sql, teamId: number, cohortId: number, kind: CsvIdKind, ids: string[]): Promise<{ count: number; ids: string[] }> {
  const skipped = { count: 0, ids: [] as string[] }
  const skip = (id: string) => {
    skipped.count++
    if (skipped.ids.length < CSV_SKIPPED_NAMED) skipped.ids.push(id)
  }
  await sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    for (let i = 0; i < ids.length; i += CHUNK) {
      const slice = ids.slice(i, i + CHUNK)
      let found: Set<string>
      if (kind === 'person_id') {
        const uuids = [...new Set(slice.map(canonicalUuid).filter((u): u is string => u !== null))]
        const rows = await tx<{ id: string }[]>`
          with found as (select p.id as person_id, p.uuid::text as uuid from persons p where p.team_id = ${teamId} and p.uuid = any(${tx.array(uuids)}::uuid[])),
          added as (insert into cohort_people (cohort_id, person_id) select ${cohortId}, person_id from found on conflict do nothing)
          select uuid as id from found`
        const matched = new Set(rows.map((r) => r.id))
        found = new Set(slice.filter((s) => matched.has(canonicalUuid(s) ?? '')))
      } else if (kind === 'distinct_id') {
        const rows = await tx<{ id: string }[]>`
          with found as (select d.distinct_id, d.person_id from person_distinct_ids d where d.team_id = ${teamId} and d.distinct_id = any(${tx.array(slice)}::text[])),
          added as (insert into cohort_people (cohort_id, person_id) select distinct ${cohortId}::int, person_id from found on conflict do nothing)
          select distinct_id as id from found`
        found = new Set(rows.map((r) => r.id))
      } else {
        const rows = await tx<{ id: string }[]>`
          with found as (select p.id as person_id, p.properties->>'email' as email from persons p where p.team_id = ${teamId} and p.properties->>'email' = any(${tx.array(slice)}::text[])),
          added as (insert into cohort_people (cohort_id, person_id) select ${cohortId}, person_id from found on conflict do nothing)
          select distinct email as id from found`
        found = new Set(rows.map((r) => r.id))
      }
      for (const id of slice) if (!found.has(id)) skip(id)
    }
    await recount(tx, cohortId)
  })
  return skipped
}

/** Remove one member by person uuid. */
export async function removeMember(sql: Sql, teamId: number, cohortId: number, uuid: string): Promise<'no_person' | 'not_member' | 'removed'> {
  return sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    const [person] = await tx<{ id: number }[]>`select id from persons where team_id = ${teamId} and uuid = ${uuid}::uuid`
    if (!person) return 'no_person'
    const removed = await tx`delete from cohort_people where cohort_id = ${cohortId} and person_id = ${person.id} returning person_id`
    if (removed.length === 0) return 'not_member'
    await recount(tx, cohortId)
    return 'removed'
  })
}

/** A member's distinct ids in a page: the first ten. */
const MEMBER_DISTINCT_IDS = 10

const personColumns = (sql: Sql) => sql`
  p.id, p.uuid, p.properties, p.is_identified, p.created_at,
  array(select distinct_id from person_distinct_ids d where d.person_id = p.id order by distinct_id limit ${MEMBER_DISTINCT_IDS}) as distinct_ids`

/** A page of a static cohort's members, oldest membership first (by person id), within the page's byte budget. */
export async function listMembers(sql: Sql, cohortId: number, limit: number, offset: number, maxBytes?: number): Promise<{ rows: PersonListing[]; cut: boolean }> {
  // sizes first (cheap), then only the rows that fit
  const sizes = await sql<{ bytes: number }[]>`
    select ${personListingBytes(sql, MEMBER_DISTINCT_IDS)} as bytes
      from cohort_people m join persons p on p.id = m.person_id
     where m.cohort_id = ${cohortId}
     order by p.id limit ${limit} offset ${offset}`
  const fit = rowsThatFit(sizes.map((r) => r.bytes), limit, maxBytes)
  const rows = fit === 0 ? [] : await sql<PersonListing[]>`
    select ${personColumns(sql)}
      from cohort_people m join persons p on p.id = m.person_id
     where m.cohort_id = ${cohortId}
     order by p.id limit ${fit} offset ${offset}`
  return { rows, cut: fit < sizes.length }
}

/** Persons of the project after `afterId`, with the static cohorts each belongs to (for a dynamic cohort's members). */
/** The project's cohorts as the engine reads them (deleted ones left out). */
export function cohortDefinitions(sql: Sql, teamId: number): Promise<{ id: number; is_static: boolean; filters: unknown }[]> {
  return sql<{ id: number; is_static: boolean; filters: unknown }[]>`
    select id, is_static, filters from cohorts where team_id = ${teamId} and not deleted`
}

export async function personsWithMemberships(
  sql: Sql,
  teamId: number,
  afterId: number,
  limit: number,
): Promise<(PersonListing & { cohorts: number[] })[]> {
  return sql<(PersonListing & { cohorts: number[] })[]>`
    select ${personColumns(sql)},
           array(select cohort_id from cohort_people m where m.person_id = p.id) as cohorts
      from persons p
     where p.team_id = ${teamId} and p.id > ${afterId}
     order by p.id limit ${limit}`
}

// ---------------------------------------------------------------------------------------------------
// what cohort checks read

export interface CohortNode {
  id: number
  name: string | null
  deleted: boolean
  is_static: boolean
  /** cohort ids its filters nest */
  nested: number[]
  /** its filters have a behavioural filter */
  behavioral: boolean
}

/** Every cohort of the project as a graph node (ids it nests, behavioural or not). */
export async function cohortGraph(sql: Sql, teamId: number): Promise<Map<number, CohortNode>> {
  const rows = await sql<CohortNode[]>`
    select c.id, c.name, c.deleted, c.is_static,
           coalesce(array(
             select distinct trim(v #>> '{}')::int
               from jsonb_path_query(coalesce(c.filters, '{}'::jsonb), ${COHORT_VALUES_PATH}::jsonpath) as v
              where (v #>> '{}') ~ '^[[:space:]]*[0-9]{1,9}[[:space:]]*$'
           ), '{}') as nested,
           jsonb_path_exists(coalesce(c.filters, '{}'::jsonb), 'strict $.** ? (@.type == "behavioral")') as behavioral
      from cohorts c where c.team_id = ${teamId}`
  return new Map(rows.map((r) => [r.id, r]))
}

/** The project's active, non-deleted flags and the cohort ids their conditions name directly. */
export async function activeFlagCohorts(sql: Sql, teamId: number): Promise<{ id: number; key: string; name: string; cohorts: number[] }[]> {
  return sql<{ id: number; key: string; name: string; cohorts: number[] }[]>`
    select f.id, f.key, f.name,
           coalesce(array(
             select distinct trim(v #>> '{}')::int
               from jsonb_path_query(f.filters, ${COHORT_VALUES_PATH}::jsonpath) as v
              where (v #>> '{}') ~ '^[[:space:]]*[0-9]{1,9}[[:space:]]*$'
           ), '{}') as cohorts
      from feature_flags f
     where f.team_id = ${teamId} and f.active and not f.deleted
     order by f.id`
}
