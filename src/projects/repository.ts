// Organizations, projects, users and personal keys in Postgres.
import type { Sql } from 'postgres'
import { inTransaction } from '../db/postgres'
import { generateKey, hashKey, maskKey } from './keys'
import { recordingSettingsColumn, type RecordingSettings } from './recording-settings'

export interface ProjectRow {
  id: number
  uuid: string
  organizationId: string
  name: string
  apiTokenMask: string
  /** null for a project created before tokens were kept in clear, until a request presents its token */
  apiToken: string | null
  createdAt: Date
  /** IANA name; insights use it for buckets, labels and relative dates */
  timezone: string
  /** 0 Sunday, 1 Monday */
  weekStartDay: number
  /** session replay settings (PostHog's team fields) */
  recording: RecordingSettings
}

export interface UserRow {
  id: number
  uuid: string
  distinctId: string
  email: string
  firstName: string
  isEmailVerified: boolean
  currentProjectId: number | null
}

const BOOTSTRAP_LOCK = 0x626f6f74 // "boot"
const DEFAULT_ORGANIZATION = 'Default organization'
const DEFAULT_ADMIN_EMAIL = 'admin@localhost'

type Tx = Sql

export async function defaultOrganizationId(sql: Tx): Promise<string> {
  const [existing] = await sql<{ id: string }[]>`select id from organizations order by created_at, id limit 1`
  if (existing) return existing.id
  const [created] = await sql<{ id: string }[]>`insert into organizations (name) values (${DEFAULT_ORGANIZATION}) returning id`
  return created.id
}

export async function createProject(
  sql: Tx,
  input: { name: string; organizationId?: string; token?: string },
): Promise<{ id: number; api_token: string }> {
  const token = input.token ?? generateKey('phc')
  const organizationId = input.organizationId ?? (await defaultOrganizationId(sql))
  const [row] = await sql<{ id: number }[]>`
    insert into projects (organization_id, name, api_token, api_token_hash, api_token_mask)
    values (${organizationId}, ${input.name}, ${token}, ${hashKey(token)}, ${maskKey(token)})
    returning id`
  // A user without a current project gets this one, so @current resolves.
  await sql`
    update users set current_project_id = ${row.id}
    where current_project_id is null
      and id in (select user_id from organization_members where organization_id = ${organizationId})`
  return { id: row.id, api_token: token }
}

export async function findUserByEmail(sql: Tx, email: string): Promise<UserRow | null> {
  const [u] = await sql<UserRow[]>`
    select id, uuid, distinct_id as "distinctId", email, first_name as "firstName",
           is_email_verified as "isEmailVerified", current_project_id as "currentProjectId"
    from users where email = ${email}`
  return u ?? null
}

/** The user with this email, created (as an owner of the organization) when missing. */
export async function ensureUser(sql: Tx, input: { email?: string; organizationId?: string }): Promise<UserRow> {
  const email = input.email ?? DEFAULT_ADMIN_EMAIL
  const organizationId = input.organizationId ?? (await defaultOrganizationId(sql))
  const existing = await findUserByEmail(sql, email)
  if (existing) return existing
  const [firstProject] = await sql<{ id: number }[]>`
    select id from projects where organization_id = ${organizationId} order by id limit 1`
  await sql`
    insert into users (distinct_id, email, first_name, current_project_id)
    values (${crypto.randomUUID()}, ${email}, ${email.split('@')[0]}, ${firstProject?.id ?? null})
    on conflict (email) do nothing`
  const user = (await findUserByEmail(sql, email))!
  await sql`
    insert into organization_members (organization_id, user_id, level)
    values (${organizationId}, ${user.id}, 15)
    on conflict do nothing`
  return user
}

export async function createPersonalKey(
  sql: Tx,
  input: { label: string; email?: string; key?: string },
): Promise<{ key: string }> {
  const key = input.key ?? generateKey('phx')
  const user = await ensureUser(sql, { email: input.email })
  await sql`
    insert into personal_api_keys (user_id, label, secure_value, mask_value)
    values (${user.id}, ${input.label}, ${hashKey(key)}, ${maskKey(key)})`
  return { key }
}

/**
 * INIT_PROJECT_API_KEY / INIT_PERSONAL_API_KEY: on a store with no organization yet, create the default
 * organization, a project holding the project key and the admin user holding the personal key. Applied once: a
 * store that already has an organization is left alone, so a key rotated or revoked since is never re-created.
 * Safe to run on every boot, concurrently. Returns whether it created anything.
 */
export async function bootstrap(sql: Sql, keys: { projectKey?: string; personalKey?: string; adminEmail?: string }): Promise<boolean> {
  if (!keys.projectKey && !keys.personalKey) return false
  return sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    await tx`select pg_advisory_xact_lock(${BOOTSTRAP_LOCK})`
    const [existing] = await tx`select 1 from organizations limit 1`
    if (existing) return false
    const organizationId = await defaultOrganizationId(tx)
    if (keys.projectKey) await createProject(tx, { name: 'Default project', organizationId, token: keys.projectKey })
    const admin = await ensureUser(tx, { organizationId, email: keys.adminEmail?.trim().toLowerCase() })
    if (keys.personalKey) {
      await tx`
        insert into personal_api_keys (user_id, label, secure_value, mask_value)
        values (${admin.id}, 'bootstrap', ${hashKey(keys.personalKey)}, ${maskKey(keys.personalKey)})`
    }
    return true
  })
}

/** A new phc_ token for the project; the old one is refused from now on (callers announce the change). */
export async function resetProjectToken(sql: Tx, projectId: number): Promise<string> {
  const token = generateKey('phc')
  await sql`
    update projects set api_token = ${token}, api_token_hash = ${hashKey(token)}, api_token_mask = ${maskKey(token)}
    where id = ${projectId}`
  return token
}

/** The project's insight settings changed (only the members given); callers have checked them. */
export async function updateProjectSettings(sql: Tx, projectId: number, settings: { timezone?: string; weekStartDay?: number }): Promise<void> {
  await sql`
    update projects set
      timezone = coalesce(${settings.timezone ?? null}::text, timezone),
      week_start_day = coalesce(${settings.weekStartDay ?? null}::smallint, week_start_day)
    where id = ${projectId}`
}

/** Every project with its token (null where not yet known), for the CLI. */
export async function allProjects(sql: Tx): Promise<ProjectRow[]> {
  return sql<ProjectRow[]>`select ${PROJECT_COLUMNS(sql)} from projects p order by p.id`
}

const PROJECT_COLUMNS = (sql: Tx) => sql`
  p.id, p.uuid, p.organization_id as "organizationId", p.name, p.api_token_mask as "apiTokenMask", p.api_token as "apiToken",
  p.created_at as "createdAt", p.timezone, p.week_start_day as "weekStartDay", ${recordingSettingsColumn(sql)} as recording`

/** The user's projects; with a key limited to some projects or organizations, only those. */
export async function projectsOfUser(
  sql: Tx,
  userId: number,
  limit: number,
  offset: number,
  only: { teams: readonly number[] | null; organizations: readonly string[] | null } = { teams: null, organizations: null },
) {
  const teams = only.teams ? [...only.teams] : null
  const organizations = only.organizations ? [...only.organizations] : null
  const where = sql`
    (${teams}::int[] is null or p.id = any(${teams}::int[]))
    and (${organizations}::text[] is null or p.organization_id::text = any(${organizations}::text[]))`
  const [{ count }] = await sql<{ count: number }[]>`
    select count(*)::int as count from projects p
    join organization_members m on m.organization_id = p.organization_id and m.user_id = ${userId}
    where ${where}`
  const rows = await sql<ProjectRow[]>`
    select ${PROJECT_COLUMNS(sql)} from projects p
    join organization_members m on m.organization_id = p.organization_id and m.user_id = ${userId}
    where ${where}
    order by p.id limit ${limit} offset ${offset}`
  return { count, rows }
}

/** The project, if the user belongs to its organization. */
export async function projectOfUser(sql: Tx, userId: number, projectId: number): Promise<ProjectRow | null> {
  const [row] = await sql<ProjectRow[]>`
    select ${PROJECT_COLUMNS(sql)} from projects p
    join organization_members m on m.organization_id = p.organization_id and m.user_id = ${userId}
    where p.id = ${projectId}`
  return row ?? null
}

export async function currentProjectId(sql: Tx, userId: number): Promise<number | null> {
  const [row] = await sql<{ id: number | null }[]>`
    select coalesce(
      -- the project last chosen, while the user still belongs to its organization
      (select u.current_project_id from users u
        join projects p on p.id = u.current_project_id
        join organization_members m on m.organization_id = p.organization_id and m.user_id = u.id
        where u.id = ${userId}),
      (select p.id from projects p join organization_members m on m.organization_id = p.organization_id
       where m.user_id = ${userId} order by p.id limit 1)
    ) as id`
  return row?.id ?? null
}

/** PostHog lets organization admins (level 8) and owners (15) reset a project token. */
export async function isOrganizationAdmin(sql: Tx, userId: number, organizationId: string): Promise<boolean> {
  const [row] = await sql<{ level: number }[]>`
    select level from organization_members where organization_id = ${organizationId} and user_id = ${userId}`
  return (row?.level ?? 0) >= 8
}

/**
 * An owner who can sign in takes the place of the password-less admin@localhost in the organizations they own: its
 * keys (what `personal-key create` and INIT_PERSONAL_API_KEY make before anyone can sign in) become theirs, so the
 * keys the README's first steps print show in that person's Settings, and it leaves those organizations (no one can
 * sign in as it, and it would count as a second owner). The keys keep their values, scopes and limits; they now act
 * as the owner. Returns how many keys moved (none when `userId` owns nothing or cannot sign in).
 */
export async function adoptHiddenAdminKeys(tx: Tx, userId: number): Promise<number> {
  const places = await tx<{ adminId: number; organizationId: string }[]>`
    select admin.id as "adminId", am.organization_id as "organizationId" from users admin
    join organization_members am on am.user_id = admin.id
    join organization_members om on om.organization_id = am.organization_id and om.user_id = ${userId} and om.level = 15
    join users owner on owner.id = om.user_id and owner.password_hash is not null
    where admin.email = ${DEFAULT_ADMIN_EMAIL} and admin.password_hash is null and admin.id <> ${userId}`
  if (places.length === 0) return 0
  const moved = await tx`update personal_api_keys set user_id = ${userId} where user_id = ${places[0].adminId} returning id`
  await tx`
    delete from organization_members
    where user_id = ${places[0].adminId} and organization_id = any(${places.map((p) => p.organizationId)}::uuid[])`
  return moved.length
}

/**
 * Whose key `personal-key create` makes when no email is named: the first owner of the first organization who can
 * sign in (so they see it in Settings), else the password-less admin@localhost; null when neither exists.
 */
export async function defaultKeyHolder(tx: Tx): Promise<{ id: number; email: string } | null> {
  const [owner] = await tx<{ id: number; email: string }[]>`
    select u.id, u.email from users u
    join organization_members m on m.user_id = u.id and m.level = 15
    join organizations o on o.id = m.organization_id
    where u.password_hash is not null and u.is_active
    order by o.created_at, o.id, m.created_at, u.id limit 1`
  if (owner) return owner
  const admin = await findUserByEmail(tx, DEFAULT_ADMIN_EMAIL)
  return admin ? { id: admin.id, email: admin.email } : null
}
