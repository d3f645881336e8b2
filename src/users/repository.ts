// Users' passwords, sessions and organizations in Postgres.
import type { Sql } from 'postgres'
import { inTransaction } from '../db/postgres'

/** One transaction: its own, or a savepoint inside the caller's (INIT_ADMIN_* runs these inside its own). */
function atomically<T>(sql: Sql, work: (tx: Sql) => Promise<T>): Promise<T> {
  const maybe = sql as Sql & { savepoint?: (fn: (tx: Sql) => Promise<T>) => Promise<T> }
  if (typeof maybe.begin === 'function') return maybe.begin((tx) => work(inTransaction(tx))) as Promise<T>
  return maybe.savepoint!((tx) => work(tx))
}

export interface LoginUser {
  id: number
  uuid: string
  email: string
  passwordHash: string | null
}

export interface SessionRow {
  id: string
  userId: number
  userUuid: string
  csrfHash: string
  lastSeenAt: Date
}

export async function findLoginUser(sql: Sql, email: string): Promise<LoginUser | null> {
  const [row] = await sql<LoginUser[]>`
    select id, uuid, email, password_hash as "passwordHash"
    from users where lower(email) = ${email} and is_active
    order by id limit 1`
  return row ?? null
}

/** Sets the hash and ends every session of the user, in one transaction. False when no user has this email. */
/**
 * The first member of an organization who can sign in owns it. A member without a password (the key holder
 * admin@localhost that `personal-key create` and INIT_PERSONAL_API_KEY make) does not count, so following the
 * README, the first console user is the owner, not a plain member. Returns whether `userId` was made the owner.
 */
export async function ownFirstSignInMember(tx: Sql, organizationId: string, userId: number, ownerLevel: number): Promise<boolean> {
  const [others] = await tx<{ n: number }[]>`
    select count(*)::int as n from organization_members m join users u on u.id = m.user_id
     where m.organization_id = ${organizationId} and m.user_id <> ${userId} and u.password_hash is not null`
  if (others.n > 0) return false
  await tx`update organization_members set level = ${ownerLevel} where organization_id = ${organizationId} and user_id = ${userId}`
  return true
}

/** `setBy`: the user who chose the password for this one (an owner adding a member); null when the user or the operator did. */
export async function setPasswordHash(sql: Sql, email: string, hash: string, setBy: number | null = null): Promise<{ id: number; email: string } | null> {
  return atomically(sql, async (tx) => {
    const [user] = await tx<{ id: number; email: string }[]>`
      update users set password_hash = ${hash}, password_changed_at = now(), password_set_by = ${setBy}
      where id = (select id from users where lower(email) = ${email} order by id limit 1)
      returning id, email`
    if (!user) return null
    await tx`delete from user_sessions where user_id = ${user.id}`
    return user
  })
}


export async function insertSession(sql: Sql, input: { userId: number; tokenHash: string; csrfHash: string }): Promise<void> {
  await sql`insert into user_sessions (user_id, token_hash, csrf_hash) values (${input.userId}, ${input.tokenHash}, ${input.csrfHash})`
}

export async function findSession(sql: Sql, tokenHash: string): Promise<SessionRow | null> {
  const [row] = await sql<SessionRow[]>`
    select s.id, s.user_id as "userId", u.uuid as "userUuid", s.csrf_hash as "csrfHash", s.last_seen_at as "lastSeenAt"
    from user_sessions s join users u on u.id = s.user_id
    where s.token_hash = ${tokenHash} and u.is_active`
  return row ?? null
}

export async function touchSession(sql: Sql, id: string): Promise<void> {
  await sql`update user_sessions set last_seen_at = now() where id = ${id}`
}

export async function deleteSession(sql: Sql, id: string): Promise<void> {
  await sql`delete from user_sessions where id = ${id}`
}

/** Sessions idle past their expiry: removed now and then so the table does not grow with abandoned ones. */
export async function deleteIdleSessions(sql: Sql, idleMs: number): Promise<number> {
  const rows = await sql`delete from user_sessions where last_seen_at < now() - ${idleMs} * interval '1 millisecond' returning id`
  return rows.length
}

export interface MeRow {
  id: number
  uuid: string
  distinctId: string
  email: string
  firstName: string
  currentProjectId: number | null
}

export async function userSummary(sql: Sql, userId: number): Promise<MeRow | null> {
  const [row] = await sql<MeRow[]>`
    select id, uuid, distinct_id as "distinctId", email, first_name as "firstName", current_project_id as "currentProjectId"
    from users where id = ${userId}`
  return row ?? null
}

export async function organizationsOfUser(sql: Sql, userId: number): Promise<{ id: string; name: string; level: number }[]> {
  return sql<{ id: string; name: string; level: number }[]>`
    select o.id, o.name, m.level from organizations o join organization_members m on m.organization_id = o.id
    where m.user_id = ${userId} order by o.created_at, o.id`
}

export async function projectSummariesOfUser(sql: Sql, userId: number): Promise<{ id: number; name: string; organization: string }[]> {
  return sql<{ id: number; name: string; organization: string }[]>`
    select p.id, p.name, p.organization_id as organization from projects p
    join organization_members m on m.organization_id = p.organization_id and m.user_id = ${userId}
    order by p.id limit 1000`
}

/** Record a setting as applied; false when it already was (by this or another process). */
export async function markApplied(sql: Sql, name: string): Promise<boolean> {
  const rows = await sql`insert into applied_settings (name) values (${name}) on conflict do nothing returning name`
  return rows.length > 0
}

export interface AttemptTaken {
  subject: string
  attempts: number
  /** the window's start as Postgres wrote it (text keeps its microseconds, so a give-back finds its window) */
  windowStartedAt: string
  /** seconds until the window ends */
  secondsLeft: number
}

/**
 * Take one attempt for each subject, atomically: the row is locked by the upsert, so concurrent attempts (in this
 * process or another) each see a different count. A window older than `windowMs` starts over at 1.
 */
export async function takeAttempts(sql: Sql, subjects: readonly string[], windowMs: number): Promise<AttemptTaken[]> {
  const rows = await sql<{ subject: string; attempts: number; window_started_at: string; seconds_left: number }[]>`
    insert into login_attempts as a (subject, window_started_at, attempts)
    select s, now(), 1 from unnest(${[...subjects]}::text[]) as s
    on conflict (subject) do update set
      window_started_at = case when a.window_started_at <= now() - ${windowMs} * interval '1 millisecond' then now() else a.window_started_at end,
      attempts = case when a.window_started_at <= now() - ${windowMs} * interval '1 millisecond' then 1 else a.attempts + 1 end
    returning subject, attempts, window_started_at::text as window_started_at,
      extract(epoch from (window_started_at + ${windowMs} * interval '1 millisecond' - now()))::float8 as seconds_left`
  return rows.map((r) => ({ subject: r.subject, attempts: r.attempts, windowStartedAt: r.window_started_at, secondsLeft: r.seconds_left }))
}

/** Give attempts back (a right password, or a refused attempt), unless their window has started over since. */
export async function returnAttempts(sql: Sql, taken: readonly AttemptTaken[]): Promise<void> {
  if (taken.length === 0) return
  const subjects = taken.map((t) => t.subject)
  const starts = taken.map((t) => t.windowStartedAt)
  await sql`
    update login_attempts a set attempts = greatest(a.attempts - 1, 0)
    from unnest(${subjects}::text[], ${starts}::text[]) as r(subject, started)
    where a.subject = r.subject and a.window_started_at::text = r.started`
}

/** Rows whose window is over: removed now and then so one address trying many emails does not grow the table. */
export async function deleteStaleAttempts(sql: Sql, windowMs: number): Promise<number> {
  const rows = await sql`delete from login_attempts where window_started_at <= now() - ${windowMs} * interval '1 millisecond' returning subject`
  return rows.length
}
