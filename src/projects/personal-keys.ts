// Personal API keys: a user's keys listed, created, read, revoked and rolled. Values are shown only when created or
// rolled; only "sha256$<hex>" is stored. Revoking or rolling announces a key change, so every process's caches
// drop the old value (see key-changes.ts); authentication itself reads Postgres on every request.
import { UUID_PATTERN } from '../http/fields'
import type { Sql } from 'postgres'
import { errors } from '../http/errors'
import { isoDate } from '../http/format'
import { announceKeyChange } from './key-changes'
import { assertMayManage, limitsForNewKey, type KeyHolder } from './key-limits'
import { generateKey, hashKey, maskKey } from './keys'

export const MAX_KEYS_PER_USER = 10
export const MAX_LABEL_LENGTH = 40

// The objects PostHog's scopes name ("<object>:read" / "<object>:write"), or "*".
const SCOPE_OBJECTS = new Set([
  'action', 'activity_log', 'annotation', 'batch_export', 'cohort', 'dashboard', 'dashboard_template',
  'early_access_feature', 'event_definition', 'experiment', 'export', 'feature_flag', 'group', 'hog_function',
  'insight', 'notebook', 'organization', 'organization_member', 'person', 'plugin', 'project', 'property_definition',
  'query', 'session_recording', 'session_recording_playlist', 'sharing_configuration', 'subscription', 'survey',
  'user', 'webhook',
])

interface KeyRow {
  id: string
  user_id: number
  label: string
  mask_value: string
  created_at: Date
  last_used_at: Date | null
  last_rolled_at: Date | null
  scopes: string[] | null
  scoped_teams: number[] | null
  scoped_organizations: string[] | null
}

export interface PersonalKeyJson {
  id: string
  label: string
  value: string | null
  mask_value: string
  created_at: string | null
  last_used_at: string | null
  last_rolled_at: string | null
  user_id: number
  scopes: string[]
  scoped_teams: number[] | null
  scoped_organizations: string[] | null
}

function toJson(row: KeyRow, value: string | null = null): PersonalKeyJson {
  return {
    id: row.id,
    label: row.label,
    value,
    mask_value: row.mask_value,
    created_at: isoDate(row.created_at),
    last_used_at: isoDate(row.last_used_at),
    last_rolled_at: isoDate(row.last_rolled_at),
    user_id: row.user_id,
    scopes: row.scopes?.length ? row.scopes : ['*'],
    scoped_teams: row.scoped_teams,
    scoped_organizations: row.scoped_organizations,
  }
}

const COLUMNS = (sql: Sql) => sql`
  id, user_id, label, mask_value, created_at, last_used_at, last_rolled_at, scopes, scoped_teams, scoped_organizations`


export function validateLabel(label: unknown): string {
  if (label === undefined || label === null) throw errors.validation('required', 'This field is required.', 'label')
  if (typeof label !== 'string' || label.trim() === '') throw errors.validation('blank', 'This field may not be blank.', 'label')
  if (label.length > MAX_LABEL_LENGTH) {
    throw errors.validation('max_length', `Ensure this field has no more than ${MAX_LABEL_LENGTH} characters.`, 'label')
  }
  return label
}

export function validateScopes(scopes: unknown): string[] {
  if (scopes === undefined || scopes === null) throw errors.validation('required', 'This field is required.', 'scopes')
  if (!Array.isArray(scopes) || scopes.length === 0) {
    throw errors.validation('invalid_input', 'At least one scope is required.', 'scopes')
  }
  for (const scope of scopes) {
    const [object, action, extra] = typeof scope === 'string' ? scope.split(':') : []
    const valid = scope === '*' || (extra === undefined && SCOPE_OBJECTS.has(object) && (action === 'read' || action === 'write'))
    if (!valid) throw errors.validation('invalid_input', `Invalid scope: ${String(scope).slice(0, 100)}`, 'scopes')
  }
  return [...new Set(scopes as string[])]
}

/** `scoped_teams`: null or [] for every project, else project ids (each must be one the user can see); undefined when absent. */
function validateScopedTeams(value: unknown): number[] | null | undefined {
  if (value === undefined) return undefined
  if (value === null) return null
  if (!Array.isArray(value) || value.length > 100 || !value.every((v) => Number.isInteger(v) && v > 0 && v <= 2_147_483_647)) {
    throw errors.validation('invalid_input', 'scoped_teams must be a list of project ids.', 'scoped_teams')
  }
  return value.length === 0 ? null : [...new Set(value as number[])]
}

function validateScopedOrganizations(value: unknown): string[] | null | undefined {
  if (value === undefined) return undefined
  if (value === null) return null
  if (!Array.isArray(value) || value.length > 100 || !value.every((v) => typeof v === 'string' && UUID_PATTERN.test(v))) {
    throw errors.validation('invalid_input', 'scoped_organizations must be a list of organization ids.', 'scoped_organizations')
  }
  return value.length === 0 ? null : [...new Set((value as string[]).map((v) => v.toLowerCase()))]
}

export interface PersonalKeyInput {
  label?: unknown
  scopes?: unknown
  scoped_teams?: unknown
  scoped_organizations?: unknown
}

/**
 * Create a key for the user: the one path for the API and the CLI (label, scopes, the projects and organizations it
 * is limited to, and the per-user cap, checked under a lock on the user's row). Answers the key with its value.
 * `creator` is the key (or session) asking; a limited one makes only keys within its own limits (key-limits.ts).
 * Without it (the CLI, an admin on the machine) the key is what the input says.
 */
export async function createPersonalKeyFor(sql: Sql, userId: number, input: PersonalKeyInput, creator?: KeyHolder): Promise<PersonalKeyJson> {
  const label = validateLabel(input.label)
  const requested = {
    scopes: validateScopes(input.scopes),
    scopedTeams: validateScopedTeams(input.scoped_teams),
    scopedOrganizations: validateScopedOrganizations(input.scoped_organizations),
  }
  const { scopes, scopedTeams, scopedOrganizations } = creator
    ? limitsForNewKey(creator, requested)
    : { scopes: requested.scopes, scopedTeams: requested.scopedTeams ?? null, scopedOrganizations: requested.scopedOrganizations ?? null }
  const value = generateKey('phx')
  return sql.begin(async (tx) => {
    // one user's creations are serialised, so the per-user limit holds under concurrency
    const [user] = await tx`select id from users where id = ${userId} for update`
    if (!user) throw errors.notFound('No such user.')
    if (scopedTeams) {
      const [{ n }] = await tx<{ n: number }[]>`
        select count(*)::int as n from projects p
        join organization_members m on m.organization_id = p.organization_id and m.user_id = ${userId}
        where p.id = any(${scopedTeams}::int[])`
      if (n !== scopedTeams.length) {
        throw errors.validation('invalid_input', 'You must be a member of all teams that you are scoping the key to.', 'scoped_teams')
      }
    }
    if (scopedOrganizations) {
      const [{ n }] = await tx<{ n: number }[]>`
        select count(*)::int as n from organization_members
        where user_id = ${userId} and organization_id = any(${scopedOrganizations}::uuid[])`
      if (n !== scopedOrganizations.length) {
        throw errors.validation('invalid_input', 'You must be a member of all organizations that you are scoping the key to.', 'scoped_organizations')
      }
    }
    const [{ count }] = await tx<{ count: number }[]>`
      select count(*)::int as count from personal_api_keys where user_id = ${userId}`
    if (count >= MAX_KEYS_PER_USER) {
      throw errors.validation(
        'invalid_input',
        `You can only have ${MAX_KEYS_PER_USER} personal API keys. Remove an existing key before creating a new one.`,
      )
    }
    const [row] = await tx<KeyRow[]>`
      insert into personal_api_keys (user_id, label, secure_value, mask_value, scopes, scoped_teams, scoped_organizations)
      values (${userId}, ${label}, ${hashKey(value)}, ${maskKey(value)}, ${scopes}, ${scopedTeams}, ${scopedOrganizations})
      returning ${COLUMNS(tx as unknown as Sql)}`
    return toJson(row, value)
  }) as Promise<PersonalKeyJson>
}

export class PersonalKeyService {
  constructor(private readonly sql: Sql) {}

  async list(userId: number): Promise<PersonalKeyJson[]> {
    const rows = await this.sql<KeyRow[]>`
      select ${COLUMNS(this.sql)} from personal_api_keys where user_id = ${userId} order by created_at desc, id`
    return rows.map((r) => toJson(r))
  }

  /** The key, if it is the user's: another user's key is 404 like a missing one. `@current` is the caller's. */
  async get(userId: number, id: string, currentKeyId: string): Promise<PersonalKeyJson> {
    return toJson(await this.row(userId, id === '@current' ? currentKeyId : id))
  }

  create(userId: number, input: PersonalKeyInput, creator: KeyHolder): Promise<PersonalKeyJson> {
    return createPersonalKeyFor(this.sql, userId, input, creator)
  }

  /** Another key of the user: only with a session or an unrestricted key (a limited key may revoke itself). */
  async revoke(userId: number, id: string, caller: KeyHolder): Promise<void> {
    await this.row(userId, id)
    assertMayManage(caller, id)
    await revokePersonalKey(this.sql, id)
  }

  async roll(userId: number, id: string, caller: KeyHolder): Promise<PersonalKeyJson> {
    await this.row(userId, id)
    assertMayManage(caller, id)
    return rollPersonalKey(this.sql, id)
  }

  private async row(userId: number, id: string): Promise<KeyRow> {
    if (!UUID_PATTERN.test(id)) throw errors.notFound()
    const [row] = await this.sql<KeyRow[]>`
      select ${COLUMNS(this.sql)} from personal_api_keys where id = ${id} and user_id = ${userId}`
    if (!row) throw errors.notFound()
    return row
  }
}

/** Every user's keys, masked (CLI). */
export async function allPersonalKeys(sql: Sql): Promise<(PersonalKeyJson & { email: string })[]> {
  const rows = await sql<(KeyRow & { email: string })[]>`
    select k.id, k.user_id, k.label, k.mask_value, k.created_at, k.last_used_at, k.last_rolled_at, k.scopes,
           k.scoped_teams, k.scoped_organizations, u.email
    from personal_api_keys k join users u on u.id = k.user_id order by k.created_at desc, k.id`
  return rows.map((r) => ({ ...toJson(r), email: r.email }))
}

/** Delete the key; false when there was none. Every process refuses it from its next request. */
export async function revokePersonalKey(sql: Sql, id: string): Promise<boolean> {
  if (!UUID_PATTERN.test(id)) return false
  const deleted = await sql`delete from personal_api_keys where id = ${id} returning id`
  if (deleted.length) await announceKeyChange(sql)
  return deleted.length > 0
}

/** A new value for the same key id; the old value is refused at once. 404 when there is no such key. */
export async function rollPersonalKey(sql: Sql, id: string): Promise<PersonalKeyJson> {
  if (!UUID_PATTERN.test(id)) throw errors.notFound()
  const value = generateKey('phx')
  const [row] = await sql<KeyRow[]>`
    update personal_api_keys
    set secure_value = ${hashKey(value)}, mask_value = ${maskKey(value)}, last_rolled_at = now()
    where id = ${id}
    returning ${COLUMNS(sql)}`
  if (!row) throw errors.notFound()
  await announceKeyChange(sql)
  return toJson(row, value)
}
