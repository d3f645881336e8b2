// What flag validation reads about the other things a flag may name: cohorts (and the cohorts they nest) and the
// project's other flags (for dependencies). Cohorts belong to the cohorts capability; flags read their table here,
// so that flags never import it (cohorts import flags: their writes bump the flag cache version).
import type { Sql } from 'postgres'
import { FLAG_FIXED_BYTES } from './project-budget'

export interface CohortRef {
  id: number
  name: string | null
  filters: unknown
  is_static: boolean
  deleted: boolean
}

export interface FlagRef {
  id: number
  key: string
  active: boolean
  /** the raw `key` of each `type: "flag"` filter in its conditions, in order */
  dependencies: unknown[]
}

/** JSON path of every `value` of a `type: "cohort"` filter, at any depth. */
export const COHORT_VALUES_PATH = 'strict $.** ? (@.type == "cohort").value'

/**
 * The project's cohorts with these ids (deleted ones too: a flag may name a deleted cohort) and every cohort they
 * nest, transitively, within the project.
 */
export async function cohortsWithNested(sql: Sql, teamId: number, ids: number[]): Promise<Map<number, CohortRef>> {
  if (ids.length === 0) return new Map()
  const rows = await sql<CohortRef[]>`
    with recursive wanted(id) as (
      select unnest(${sql.array(ids)}::int[])
      union
      select nested.id
        from wanted w
        join cohorts c on c.id = w.id and c.team_id = ${teamId}
        cross join lateral (
          select trim(v #>> '{}')::int as id
            from jsonb_path_query(coalesce(c.filters, '{}'::jsonb), ${COHORT_VALUES_PATH}::jsonpath) as v
           where (v #>> '{}') ~ '^[[:space:]]*[0-9]{1,9}[[:space:]]*$'
        ) nested
    )
    select c.id, c.name, c.filters, c.is_static, c.deleted
      from cohorts c where c.team_id = ${teamId} and c.id in (select id from wanted)`
  return new Map(rows.map((r) => [r.id, r]))
}

/**
 * The column `dependencies` of a query on `feature_flags f`: the raw `key` of each `type: "flag"` filter in the
 * flag's conditions, in order (groups or properties that are not arrays count as none).
 */
function dependenciesColumn(sql: Sql) {
  return sql`
           coalesce((
             select jsonb_agg(p.value->'key' order by g.n, p.n)
               from jsonb_array_elements(case when jsonb_typeof(f.filters->'groups') = 'array' then f.filters->'groups' else '[]'::jsonb end)
                    with ordinality as g(value, n)
               cross join jsonb_array_elements(case when jsonb_typeof(g.value->'properties') = 'array' then g.value->'properties' else '[]'::jsonb end)
                    with ordinality as p(value, n)
              where p.value->>'type' = 'flag' and p.value ? 'key'
           ), '[]'::jsonb) as dependencies`
}

/** Every flag of the project that is not deleted, with the keys its `type: "flag"` filters name. */
export async function flagRefs(sql: Sql, teamId: number): Promise<FlagRef[]> {
  return sql<FlagRef[]>`
    select f.id, f.key, f.active, ${dependenciesColumn(sql)}
      from feature_flags f
     where f.team_id = ${teamId} and not f.deleted
     order by f.id`
}

/** Flags with these ids that are disabled (deleted ones included), by key: what enabling a dependent is refused for. */
export async function disabledFlags(sql: Sql, teamId: number, ids: number[]): Promise<{ id: number; key: string }[]> {
  if (ids.length === 0) return []
  return sql<{ id: number; key: string }[]>`
    select id, key from feature_flags where team_id = ${teamId} and id = any(${sql.array(ids)}::int[]) and not active order by key, id`
}

/**
 * Every flag of the project that is not deleted, with its size (project-budget.ts flagBytes: filters, key and name
 * as JSON, and the fixed fields) and every flag reference (the project's budget).
 */
export async function flagFootprints(sql: Sql, teamId: number): Promise<{ id: number; key: string; bytes: number; dependencies: unknown[] }[]> {
  return sql<{ id: number; key: string; bytes: number; dependencies: unknown[] }[]>`
    select f.id, f.key,
           octet_length(f.filters::text) + octet_length(to_json(f.key)::text) + octet_length(to_json(f.name)::text) + ${FLAG_FIXED_BYTES}::int as bytes,
           ${dependenciesColumn(sql)}
      from feature_flags f
     where f.team_id = ${teamId} and not f.deleted
     order by f.id`
}

/** The bytes of the project's cohorts' filters (not deleted), but the one with id `except`. */
export async function cohortBytes(sql: Sql, teamId: number, except: number | null = null): Promise<number> {
  const [row] = await sql<{ bytes: number }[]>`
    select coalesce(sum(octet_length(coalesce(filters, '{}'::jsonb)::text)), 0)::bigint as bytes
      from cohorts where team_id = ${teamId} and not deleted and (${except}::int is null or id <> ${except})`
  return Number(row.bytes)
}
