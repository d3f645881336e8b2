// Organization memberships in Postgres (the tables of sql/postgres/0001_foundation.sql).
import type { Sql } from 'postgres'

export interface MemberRow {
  userId: number
  uuid: string
  distinctId: string
  firstName: string
  email: string
  isEmailVerified: boolean
  level: number
  joinedAt: Date
  canSignIn: boolean
}

const COLUMNS = (sql: Sql) => sql`
  u.id as "userId", u.uuid, u.distinct_id as "distinctId", u.first_name as "firstName", u.email,
  u.is_email_verified as "isEmailVerified", m.level, m.created_at as "joinedAt", (u.password_hash is not null) as "canSignIn"`

/** The organization of the user's current project, else their first; null when they belong to none. */
export async function currentOrganizationOf(sql: Sql, userId: number): Promise<string | null> {
  const [row] = await sql<{ id: string }[]>`
    select m.organization_id as id from organization_members m
    left join users u on u.id = m.user_id
    left join projects p on p.id = u.current_project_id and p.organization_id = m.organization_id
    where m.user_id = ${userId}
    order by (p.id is null), m.created_at, m.organization_id limit 1`
  return row?.id ?? null
}

/** Who chose the user's current password when it was not the user (null: the user or the operator did). */
export async function passwordSetBy(sql: Sql, userId: number): Promise<number | null> {
  const [row] = await sql<{ setBy: number | null }[]>`select password_set_by as "setBy" from users where id = ${userId}`
  return row?.setBy ?? null
}

export async function levelOf(sql: Sql, organizationId: string, userId: number): Promise<number | null> {
  const [row] = await sql<{ level: number }[]>`
    select level from organization_members where organization_id = ${organizationId} and user_id = ${userId}`
  return row?.level ?? null
}

export async function organizationHasAnyProject(sql: Sql, organizationId: string, projectIds: readonly number[]): Promise<boolean> {
  const [row] = await sql`select 1 from projects where organization_id = ${organizationId} and id = any(${[...projectIds]}::int[]) limit 1`
  return row !== undefined
}

export async function listMembers(sql: Sql, organizationId: string, limit: number, offset: number): Promise<{ count: number; rows: MemberRow[] }> {
  const [[{ count }], rows] = await Promise.all([
    sql<{ count: number }[]>`select count(*)::int as count from organization_members where organization_id = ${organizationId}`,
    sql<MemberRow[]>`
      select ${COLUMNS(sql)} from organization_members m join users u on u.id = m.user_id
      where m.organization_id = ${organizationId}
      order by m.level desc, lower(u.email), u.id limit ${limit} offset ${offset}`,
  ])
  return { count, rows }
}

/** One member by user uuid, its row locked with the organization's other memberships (so the owner count holds). */
export async function lockedMember(tx: Sql, organizationId: string, userUuid: string): Promise<{ member: MemberRow | null; owners: number }> {
  const locked = await tx<{ level: number; canSignIn: boolean }[]>`
    select m.level, (u.password_hash is not null) as "canSignIn" from organization_members m join users u on u.id = m.user_id
    where m.organization_id = ${organizationId} for update of m`
  // an owner no one can sign in as (a key holder) manages nothing: only owners with a password count
  const owners = locked.filter((m) => m.level === 15 && m.canSignIn).length
  const [member] = await tx<MemberRow[]>`
    select ${COLUMNS(tx)} from organization_members m join users u on u.id = m.user_id
    where m.organization_id = ${organizationId} and u.uuid = ${userUuid}`
  return { member: member ?? null, owners }
}

export async function memberOf(sql: Sql, organizationId: string, userId: number): Promise<MemberRow | null> {
  const [member] = await sql<MemberRow[]>`
    select ${COLUMNS(sql)} from organization_members m join users u on u.id = m.user_id
    where m.organization_id = ${organizationId} and u.id = ${userId}`
  return member ?? null
}

export async function setMemberLevel(tx: Sql, organizationId: string, userId: number, level: number): Promise<void> {
  await tx`update organization_members set level = ${level} where organization_id = ${organizationId} and user_id = ${userId}`
}

/** The membership ends (every request checks membership, so the user's open pages lose the projects at once). */
export async function deleteMember(tx: Sql, organizationId: string, userId: number): Promise<void> {
  await tx`delete from organization_members where organization_id = ${organizationId} and user_id = ${userId}`
}

/** An existing user joins (false when already a member). */
export async function insertMembership(tx: Sql, organizationId: string, userId: number, level: number): Promise<boolean> {
  const rows = await tx`
    insert into organization_members (organization_id, user_id, level) values (${organizationId}, ${userId}, ${level})
    on conflict do nothing returning user_id`
  if (rows.length === 0) return false
  // a user without a current project gets one of this organization's, so @current resolves for them
  await tx`
    update users set current_project_id = (select id from projects where organization_id = ${organizationId} order by id limit 1)
    where id = ${userId} and current_project_id is null`
  return true
}
