// Feature flags in Postgres. Every write bumps the project's row in feature_flag_versions and (on a real
// Postgres) sends NOTIFY in the same transaction, so every process's flag cache learns of it.
import { errors } from '../http/errors'
import { FLAG_LIMITS } from './limits'
import type { Sql } from 'postgres'
import { cancelledWithRequest } from '../db/cancel'
import { asJson, inTransaction } from '../db/postgres'
import { groupTypeMapping } from '../people/stored-properties'
import { recordingSettingsColumn, type RecordingSettings } from '../projects/recording-settings'
import { COHORT_VALUES_PATH } from './references'
import type { FlagRow } from './serialize'
import type { FlagInput } from './validation'

export const FLAGS_CHANNEL = 'phog_feature_flags'

/** A user as PostHog's UserBasicSerializer renders it, as a SQL expression over `users u`. */
export const userObject = (sql: Sql) => sql`
  json_build_object('id', u.id, 'uuid', u.uuid, 'distinct_id', u.distinct_id, 'first_name', u.first_name,
                    'email', u.email, 'is_email_verified', u.is_email_verified)`

function selectFlags(sql: Sql) {
  return sql`
    select f.id, f.team_id, f.key, f.name, f.filters, f.rollout_percentage, f.active, f.deleted,
           f.ensure_experience_continuity, f.version, f.created_at, f.updated_at, f.tags,
           (select ${userObject(sql)} from users u where u.id = f.created_by_id) as created_by,
           (select ${userObject(sql)} from users u where u.id = f.last_modified_by_id) as last_modified_by
    from feature_flags f`
}

export interface ListOptions {
  limit: number
  offset: number
  /** case-insensitive substring of the key or the name */
  search?: string
  active?: boolean
}

export async function listFlags(sql: Sql, teamId: number, o: ListOptions): Promise<{ count: number; rows: FlagRow[] }> {
  const search = o.search ? `%${o.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null
  const where = sql`
    f.team_id = ${teamId} and not f.deleted
    and (${search}::text is null or f.key ilike ${search} or f.name ilike ${search})
    and (${o.active ?? null}::boolean is null or f.active = ${o.active ?? null})`
  const [[{ count }], rows] = await Promise.all([
    cancelledWithRequest(sql<{ count: number }[]>`select count(*)::int as count from feature_flags f where ${where}`),
    cancelledWithRequest(sql<FlagRow[]>`${selectFlags(sql)} where ${where} order by f.created_at desc, f.id desc limit ${o.limit} offset ${o.offset}`),
  ])
  return { count, rows }
}

/** A flag of the project, deleted or not. */
export async function getFlag(sql: Sql, teamId: number, id: number): Promise<FlagRow | null> {
  const [row] = await sql<FlagRow[]>`${selectFlags(sql)} where f.team_id = ${teamId} and f.id = ${id}`
  return row ?? null
}

/** The project's flag with this key, not deleted (one at most: keys are unique among live flags). */
export async function getFlagByKey(sql: Sql, teamId: number, key: string): Promise<FlagRow | null> {
  const [row] = await sql<FlagRow[]>`${selectFlags(sql)} where f.team_id = ${teamId} and f.key = ${key} and not f.deleted limit 1`
  return row ?? null
}

export async function keyTaken(sql: Sql, teamId: number, key: string, exceptId: number | null): Promise<boolean> {
  const [row] = await sql`
    select 1 from feature_flags
    where team_id = ${teamId} and key = ${key} and not deleted and (${exceptId}::int is null or id <> ${exceptId})
    limit 1`
  return row !== undefined
}

/** The advisory lock class of a project's flag and cohort writes (the second key is the project id). */
export const FLAG_WRITE_LOCK = 0x70_68_66_6c // "phfl"

/**
 * Run `work` in one transaction that holds the project's flag-and-cohort write lock from its first statement: every
 * check it makes reads what no other writer of the project (in this process or another) can change before it
 * commits. Flag writes and cohort writes take the same lock, since each checks the other's rows.
 */
export async function withProjectWriteLock<T>(sql: Sql, teamId: number, work: (tx: Sql) => Promise<T>): Promise<T> {
  return (await sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    await tx`select pg_advisory_xact_lock(${FLAG_WRITE_LOCK}::int, ${teamId}::int)`
    return work(tx)
  })) as T
}

/**
 * Bump the project's flag version (and, on a real Postgres, NOTIFY at commit). Cohort writes bump it too: the flag
 * cache holds the cohorts the flags use.
 */
export async function bumpFlagVersion(tx: Sql, teamId: number, notify: boolean): Promise<void> {
  await tx`
    insert into feature_flag_versions (team_id, version) values (${teamId}, 1)
    on conflict (team_id) do update set version = feature_flag_versions.version + 1, updated_at = now()`
  if (notify) await tx`select pg_notify(${FLAGS_CHANNEL}, ${String(teamId)})`
}

/** Insert a flag; `tx` holds the project's write lock (withProjectWriteLock). Answers the row as written. */
export async function createFlag(tx: Sql, teamId: number, userId: number, input: FlagInput & { key: string }, notify: boolean): Promise<FlagRow> {
  await bumpFlagVersion(tx, teamId, notify)
  // PostHog hard-deletes soft-deleted flags with the same key before creating one.
  await tx`delete from feature_flags where team_id = ${teamId} and key = ${input.key} and deleted`
  // counted under the project's lock, so concurrent creates cannot pass the limit together
  const [{ n }] = await tx<{ n: number }[]>`select count(*)::int as n from feature_flags where team_id = ${teamId} and not deleted`
  if (n >= FLAG_LIMITS.flagsPerProject) {
    throw errors.validation('limit_exceeded', `A project may have at most ${FLAG_LIMITS.flagsPerProject} feature flags: delete some first.`, null)
  }
  const [row] = await tx<{ id: number }[]>`
    insert into feature_flags (team_id, key, name, filters, active, deleted, ensure_experience_continuity,
                               version, created_by_id, last_modified_by_id, tags)
    values (${teamId}, ${input.key}, ${input.name ?? ''}, ${tx.json(asJson(input.filters ?? {}))},
            ${input.active ?? true}, ${input.deleted ?? false}, ${input.ensure_experience_continuity ?? false},
            1, ${userId}, ${userId}, ${input.tags ?? []}::text[])
    returning id`
  // read back inside the same transaction: what this request wrote, never a later writer's row
  return (await getFlag(tx, teamId, row.id))!
}

/** Write the fields given; `tx` holds the project's write lock. Answers the row as this write left it, or null. */
export async function updateFlag(tx: Sql, teamId: number, id: number, userId: number, input: FlagInput, notify: boolean): Promise<FlagRow | null> {
  await bumpFlagVersion(tx, teamId, notify)
  const filters = input.filters === undefined ? null : tx.json(asJson(input.filters))
  const rows = await tx`
    update feature_flags set
      key = coalesce(${input.key ?? null}, key),
      name = coalesce(${input.name ?? null}, name),
      filters = coalesce(${filters}::jsonb, filters),
      active = coalesce(${input.active ?? null}::boolean, active),
      deleted = coalesce(${input.deleted ?? null}::boolean, deleted),
      ensure_experience_continuity = coalesce(${input.ensure_experience_continuity ?? null}::boolean, ensure_experience_continuity),
      tags = coalesce(${input.tags ?? null}::text[], tags),
      version = version + 1,
      last_modified_by_id = ${userId},
      updated_at = now()
    where team_id = ${teamId} and id = ${id}
    returning id`
  return rows.length > 0 ? getFlag(tx, teamId, id) : null
}

/** What the flag cache holds for one project, read in one statement (one snapshot). */
export type CachedFlagRow = Pick<
  FlagRow,
  'id' | 'team_id' | 'key' | 'name' | 'filters' | 'rollout_percentage' | 'active' | 'deleted' | 'ensure_experience_continuity' | 'version'
>

/** A cohort as the flag cache holds it (only cohorts that non-deleted flags use, directly or nested, not deleted). */
export interface CachedCohortRow {
  id: number
  is_static: boolean
  filters: unknown
  version: number
}

export interface ProjectFlags {
  version: number
  flags: CachedFlagRow[]
  /** group type index → name */
  groupTypes: [number, string][]
  /** the cohorts the flags use (absent: none) */
  cohorts?: CachedCohortRow[]
  /** the project's session replay settings (absent: the defaults, recording off) */
  recording?: Partial<RecordingSettings> | null
  /** whether the project has a survey posthog-js may show (absent: none) */
  surveys?: boolean
  /** whether posthog-js captures exceptions on its own (absent: off) */
  autocaptureExceptions?: boolean
}

export async function loadProjectFlags(sql: Sql, teamId: number): Promise<ProjectFlags> {
  const [row] = await sql<{ version: number; flags: CachedFlagRow[] | null; group_types: [number, string][] | null; cohorts: CachedCohortRow[] | null; recording: Partial<RecordingSettings> | null; surveys: boolean }[]>`
    select
      coalesce((select version from feature_flag_versions where team_id = ${teamId}), 0)::bigint as version,
      (select ${recordingSettingsColumn(sql)} from projects p where p.id = ${teamId}) as recording,
      -- a survey posthog-js may show or an app may ask for (not archived; survey writes bump the version)
      exists (select 1 from surveys s where s.team_id = ${teamId} and not s.archived and s.type in ('popover', 'widget', 'api')) as surveys,
      (select json_agg(json_build_object(
          'id', f.id, 'team_id', f.team_id, 'key', f.key, 'name', f.name, 'filters', f.filters,
          'rollout_percentage', f.rollout_percentage, 'active', f.active, 'deleted', f.deleted,
          'ensure_experience_continuity', f.ensure_experience_continuity, 'version', f.version) order by f.id)
        from feature_flags f where f.team_id = ${teamId} and not f.deleted) as flags,
      (select json_agg(json_build_array(g.group_type_index, g.group_type) order by g.group_type_index)
        from group_type_mappings g where g.team_id = ${teamId}) as group_types,
      (with recursive used(id) as (
          select trim(v #>> '{}')::int
            from feature_flags f cross join lateral jsonb_path_query(f.filters, ${COHORT_VALUES_PATH}::jsonpath) as v
           where f.team_id = ${teamId} and not f.deleted and (v #>> '{}') ~ '^[[:space:]]*[0-9]{1,9}[[:space:]]*$'
          union
          select trim(v #>> '{}')::int
            from used u
            join cohorts c on c.id = u.id and c.team_id = ${teamId} and not c.deleted
            cross join lateral jsonb_path_query(coalesce(c.filters, '{}'::jsonb), ${COHORT_VALUES_PATH}::jsonpath) as v
           where (v #>> '{}') ~ '^[[:space:]]*[0-9]{1,9}[[:space:]]*$'
        )
        select json_agg(json_build_object('id', c.id, 'is_static', c.is_static, 'filters', c.filters, 'version', c.version) order by c.id)
          from cohorts c where c.team_id = ${teamId} and not c.deleted and c.id in (select id from used)) as cohorts`
  return { version: Number(row.version), flags: row.flags ?? [], groupTypes: row.group_types ?? [], cohorts: row.cohorts ?? [], recording: row.recording, surveys: row.surveys === true, autocaptureExceptions: row.recording?.autocapture_exceptions_opt_in === true }
}

export interface ProjectStamp {
  teamId: number
  version: number
  groupTypes: number
}

/** The cheap check the cache runs every FLAG_REFRESH_INTERVAL_MS: each project's flag version and group type count. */
export async function projectStamps(sql: Sql, teamIds: number[]): Promise<ProjectStamp[]> {
  if (teamIds.length === 0) return []
  const rows = await sql<{ team_id: number; version: number; group_types: number }[]>`
    select t.id as team_id,
           coalesce(v.version, 0)::bigint as version,
           (select count(*) from group_type_mappings g where g.team_id = t.id)::int as group_types
    from unnest(${sql.array(teamIds)}::int[]) as t(id)
    left join feature_flag_versions v on v.team_id = t.id`
  return rows.map((r) => ({ teamId: r.team_id, version: Number(r.version), groupTypes: r.group_types }))
}

/**
 * Experience continuity (PostHog's get/set_feature_flag_hash_key_overrides): with `hashKey` (the request's
 * $anon_distinct_id), first record it for every person of `distinctIds` and every flag key that has no override
 * yet (the first one wins); then return the overrides of those persons, the first distinct id's winning.
 */
export async function hashKeyOverrides(
  sql: Sql,
  teamId: number,
  distinctIds: string[],
  write: { hashKey: string; flagKeys: string[] } | null,
): Promise<Record<string, string>> {
  const rows = write
    ? await sql<{ distinct_id: string; feature_flag_key: string; hash_key: string }[]>`
        with ids as (
          select person_id, distinct_id from person_distinct_ids where team_id = ${teamId} and distinct_id = any(${sql.array(distinctIds)})
        ), inserted as (
          insert into feature_flag_hash_key_overrides (team_id, person_id, feature_flag_key, hash_key)
          select ${teamId}, ids.person_id, k.key, ${write.hashKey}
          from (select distinct person_id from ids) ids cross join unnest(${sql.array(write.flagKeys)}::text[]) as k(key)
          on conflict do nothing
          returning person_id, feature_flag_key, hash_key
        ), existing as (
          select person_id, feature_flag_key, hash_key from feature_flag_hash_key_overrides
          where team_id = ${teamId} and person_id in (select person_id from ids)
        )
        select ids.distinct_id, o.feature_flag_key, o.hash_key
        from (select * from existing union all select * from inserted) o join ids on ids.person_id = o.person_id`
    : await sql<{ distinct_id: string; feature_flag_key: string; hash_key: string }[]>`
        select d.distinct_id, o.feature_flag_key, o.hash_key
        from person_distinct_ids d
        join feature_flag_hash_key_overrides o on o.team_id = d.team_id and o.person_id = d.person_id
        where d.team_id = ${teamId} and d.distinct_id = any(${sql.array(distinctIds)})`
  // Overrides of the first distinct id's person are applied last, so they win.
  rows.sort((a, b) => (a.distinct_id === distinctIds[0] ? 1 : -1) - (b.distinct_id === distinctIds[0] ? 1 : -1))
  const out: Record<string, string> = {}
  for (const r of rows) out[r.feature_flag_key] = r.hash_key
  return out
}

/** Projects whose flags were ever written, most recently changed first (the cache preloads them at boot). */
export async function projectsWithFlags(sql: Sql, limit = 1000): Promise<number[]> {
  const rows = await sql<{ team_id: number }[]>`
    select team_id from feature_flag_versions order by updated_at desc limit ${limit}`
  return rows.map((r) => r.team_id)
}

/** Where the flag cache reads from: Postgres, with LISTEN when it reaches other connections. */
export function postgresFlagSource(sql: Sql, options: { listen: boolean }) {
  return {
    load: (teamId: number) => loadProjectFlags(sql, teamId),
    stamps: (teamIds: number[]) => projectStamps(sql, teamIds),
    groupTypes: async (teamId: number) => [...(await groupTypeMapping(sql, teamId))],
    knownProjects: () => projectsWithFlags(sql),
    listen: options.listen
      ? async (onChange: (teamId: number) => void, onReconnect: () => void) => {
          let first = true
          const subscription = await sql.listen(
            FLAGS_CHANNEL,
            (payload) => {
              const teamId = Number(payload)
              if (Number.isInteger(teamId)) onChange(teamId)
            },
            () => {
              // postgres.js re-subscribes after a lost connection: what was sent meanwhile is caught up by a check
              if (!first) onReconnect()
              first = false
            },
          )
          return () => subscription.unlisten()
        }
      : undefined,
  }
}
