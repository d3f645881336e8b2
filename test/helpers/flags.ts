// Helpers for the feature-flag tests: flags through the API or straight into Postgres, persons and groups as
// ingestion would have stored them, and /decide calls.
import type { Sql } from 'postgres'
import { BASE, json, PROJECT_KEY, type Stack } from './stack'

export async function createFlag(stack: Stack, body: Record<string, unknown>, project = '@current'): Promise<any> {
  const r = await stack.api(`/api/projects/${project}/feature_flags/`, { method: 'POST', json: body })
  const out = await json(r)
  if (r.status !== 201) throw new Error(`create flag: ${r.status} ${JSON.stringify(out)}`)
  return out
}

/** A flag row written directly (e.g. a legacy flag the API cannot create), announced as the API would. */
export async function insertFlag(
  sql: Sql,
  flag: { teamId?: number; key: string; filters?: unknown; rolloutPercentage?: number | null; active?: boolean; version?: number; continuity?: boolean },
): Promise<number> {
  const teamId = flag.teamId ?? 1
  const [row] = await sql<{ id: number }[]>`
    insert into feature_flags (team_id, key, filters, rollout_percentage, active, version, ensure_experience_continuity)
    values (${teamId}, ${flag.key}, ${sql.json((flag.filters ?? {}) as never)}, ${flag.rolloutPercentage ?? null},
            ${flag.active ?? true}, ${flag.version ?? 1}, ${flag.continuity ?? false})
    returning id`
  await sql`
    insert into feature_flag_versions (team_id, version) values (${teamId}, 1)
    on conflict (team_id) do update set version = feature_flag_versions.version + 1`
  return row.id
}

/** Make the stack's cache see flags written with insertFlag. */
export async function flagsChanged(stack: Stack, teamId = 1): Promise<void> {
  await stack.services.flags.cache.refresh(teamId)
}

/** A person as ingestion stores it: properties and distinct ids. */
export async function insertPerson(sql: Sql, distinctIds: string[], properties: Record<string, unknown>, teamId = 1): Promise<number> {
  const [p] = await sql<{ id: number }[]>`
    insert into persons (uuid, team_id, properties) values (${crypto.randomUUID()}, ${teamId}, ${sql.json(properties as never)}) returning id`
  for (const d of distinctIds) {
    await sql`insert into person_distinct_ids (team_id, distinct_id, person_id) values (${teamId}, ${d}, ${p.id})`
  }
  return p.id
}

export async function insertGroupType(sql: Sql, name: string, index: number, teamId = 1): Promise<void> {
  await sql`insert into group_type_mappings (team_id, group_type, group_type_index) values (${teamId}, ${name}, ${index}) on conflict do nothing`
}

export async function insertGroup(sql: Sql, index: number, key: string, properties: Record<string, unknown>, teamId = 1): Promise<void> {
  await sql`
    insert into groups (team_id, group_type_index, group_key, group_properties)
    values (${teamId}, ${index}, ${key}, ${sql.json(properties as never)})`
}

export function decideRequest(path: string, body: unknown, headers: Record<string, string> = { 'content-type': 'application/json' }): Request {
  return new Request(`${BASE}${path}`, { method: 'POST', body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body), headers })
}

export async function decide(stack: Stack, v: number | string | null, body: Record<string, unknown>): Promise<any> {
  const path = v === null ? '/decide/' : `/decide/?v=${v}`
  const r = await stack.app.handle(decideRequest(path, { api_key: PROJECT_KEY, ...body }))
  const out = await json(r)
  if (r.status !== 200) throw new Error(`decide: ${r.status} ${JSON.stringify(out)}`)
  return out
}

export const THREE_VARIANTS = {
  variants: [
    { key: 'first-variant', name: 'First Variant', rollout_percentage: 50 },
    { key: 'second-variant', name: 'Second Variant', rollout_percentage: 25 },
    { key: 'third-variant', name: 'Third Variant', rollout_percentage: 25 },
  ],
}
