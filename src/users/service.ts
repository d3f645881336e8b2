// Console users: passwords (argon2id), sessions and who a user is. Never sees the HTTP context.
import type { Sql } from 'postgres'
import { ApiError, errors } from '../http/errors'
import { inTransaction, isConnectionError } from '../db/postgres'
import { insertUser, OWNER, validateEmail } from '../projects/accounts'
import type { Principal } from '../projects/auth'
import { visibleTo } from '../projects/key-limits'
import { adoptHiddenAdminKeys } from '../projects/repository'
import {
  checkCsrf,
  hashToken,
  MAX_EMAIL_LENGTH,
  MAX_PASSWORD_LENGTH,
  needsTouch,
  newToken,
  normalizeEmail,
  passwordProblem,
  plausibleToken,
  SESSION_IDLE_MS,
  sessionExpired,
} from './rules'
import { LoginThrottle, type ThrottleOptions } from './throttle'
import {
  deleteIdleSessions,
  deleteSession,
  findLoginUser,
  findSession,
  insertSession,
  markApplied,
  organizationsOfUser,
  projectSummariesOfUser,
  setPasswordHash,
  ownFirstSignInMember,
  touchSession,
  userSummary,
} from './repository'

export async function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: 'argon2id' })
}

/** A hash to verify against when the email is unknown, so that a miss costs as long as a wrong password. */
let decoyHash: Promise<string> | undefined

export class PasswordError extends Error {}

function checkedPassword(password: string): string {
  const problem = passwordProblem(password)
  if (problem) throw new PasswordError(problem)
  return password
}

/** A user with a password (or none: it cannot sign in until `user set-password`), made as accounts.createUser makes users. */
export async function createUser(sql: Sql, input: { email: string; password?: string; organizationId?: string }) {
  const passwordHash = input.password === undefined ? null : await hashPassword(checkedPassword(input.password))
  return sql.begin(async (transaction) => {
    const tx = inTransaction(transaction)
    const user = await insertUser(tx, { email: validateEmail(input.email), organizationId: input.organizationId })
    if (passwordHash) {
      await setPasswordHash(tx, user.email, passwordHash)
      await takeOwnershipIfFirst(tx, user.organization, user.id)
    }
    return user
  })
}

/**
 * After `user create --password-stdin`: the user owns their organization when no other member can sign in (the
 * README's first console user, after `personal-key create` made the password-less admin@localhost).
 */
export async function ownIfFirstToSignIn(sql: Sql, user: { id: number; organization: string }): Promise<boolean> {
  return sql.begin((transaction) => takeOwnershipIfFirst(inTransaction(transaction), user.organization, user.id)) as Promise<boolean>
}

/** ownFirstSignInMember, and the new owner takes over the hidden admin@localhost's keys (adoptHiddenAdminKeys). */
async function takeOwnershipIfFirst(tx: Sql, organizationId: string, userId: number): Promise<boolean> {
  const owns = await ownFirstSignInMember(tx, organizationId, userId, OWNER)
  if (owns) await adoptHiddenAdminKeys(tx, userId)
  return owns
}

/** `user set-password`: the new hash, and every session of the user ended. */
export async function setPassword(sql: Sql, emailInput: string, password: string) {
  const hash = await hashPassword(checkedPassword(password))
  const user = await setPasswordHash(sql, normalizeEmail(emailInput), hash)
  if (!user) throw new PasswordError(`no user has the email ${normalizeEmail(emailInput)}`)
  return user
}

/**
 * INIT_ADMIN_EMAIL / INIT_ADMIN_PASSWORD, applied once per store: the user is created (an owner of the default
 * organization) or given the password. A later boot leaves it alone, so a password
 * changed since with `user set-password` stays changed. Returns whether it applied them now.
 */
export async function applyInitAdmin(sql: Sql, email: string, password: string): Promise<boolean> {
  checkedPassword(password)
  const hash = await hashPassword(password)
  return sql.begin(async (transaction) => {
    const tx = transaction as unknown as Sql
    if (!(await markApplied(tx, 'init_admin'))) return false
    const normalized = normalizeEmail(email)
    // the admin user: an owner of the default organization even when that organization already has members
    let admin = await setPasswordHash(tx, normalized, hash)
    if (!admin) {
      await insertUser(tx, { email: normalized, level: OWNER })
      admin = await setPasswordHash(tx, normalized, hash)
    }
    // INIT_PERSONAL_API_KEY's key (held by admin@localhost) shows in this owner's Settings
    if (admin) await adoptHiddenAdminKeys(tx, admin.id)
    return true
  })
}

const UNLIMITED = { scopedTeams: null, scopedOrganizations: null }

export interface SessionOpened {
  token: string
  csrfToken: string
  userId: number
}

export interface SessionCheck {
  /** the session cookie's value */
  token: string | undefined
  method: string
  csrfCookie: string | undefined
  csrfHeader: string | null
}

/** How a sign-in attempt ended: `success` and `wrong_password` are the password checks (argon2) made. */
export type LoginOutcome = 'success' | 'wrong_password' | 'throttled' | 'invalid'

export interface UserServiceOptions {
  throttle?: ThrottleOptions
  /** counts each sign-in attempt by outcome (metrics) */
  onAttempt?: (outcome: LoginOutcome) => void
}

export class UserService {
  private readonly throttle: LoginThrottle
  private readonly counted: (outcome: LoginOutcome) => void
  private lastSweep = 0

  constructor(
    private readonly sql: Sql,
    options: UserServiceOptions = {},
  ) {
    this.throttle = new LoginThrottle(sql, options.throttle)
    this.counted = options.onAttempt ?? (() => undefined)
  }

  /**
   * Checks email and password: 401 for a wrong one, 429 once throttled. The attempt is taken before the password is
   * checked (throttle.ts), so concurrent guesses cannot outrun the limit.
   */
  async login(emailInput: string, password: string, address: string | null): Promise<SessionOpened> {
    const email = normalizeEmail(emailInput)
    if (password.length > MAX_PASSWORD_LENGTH || email.length > MAX_EMAIL_LENGTH) {
      // no user has such an email or password: nothing to check, nothing to count
      this.counted('invalid')
      throw invalidCredentials()
    }
    let reservation
    try {
      reservation = await this.guard(this.throttle.reserve(email, address))
    } catch (error) {
      if (error instanceof ApiError && error.status === 429) this.counted('throttled')
      throw error
    }
    const user = await this.guard(findLoginUser(this.sql, email))
    // an unknown email costs the same argon2 work as a wrong password: timing does not tell which emails exist
    decoyHash ??= hashPassword(newToken())
    const ok = user?.passwordHash ? await Bun.password.verify(password, user.passwordHash) : (await Bun.password.verify(password, await decoyHash), false)
    if (!user || !ok) {
      this.counted('wrong_password')
      throw invalidCredentials()
    }
    this.counted('success')
    // a failed give-back only leaves the count one higher until the window ends
    await reservation.succeeded().catch(() => undefined)
    const token = newToken()
    const csrfToken = newToken()
    await this.guard(insertSession(this.sql, { userId: user.id, tokenHash: hashToken(token), csrfHash: hashToken(csrfToken) }))
    this.sweep()
    return { token, csrfToken, userId: user.id }
  }

  async logout(token: string | undefined): Promise<void> {
    if (!plausibleToken(token)) return
    const session = await this.guard(findSession(this.sql, hashToken(token)))
    if (session) await this.guard(deleteSession(this.sql, session.id))
  }

  /**
   * The principal behind a session cookie, or null when there is no live session (the caller answers 401).
   * A cookie-authenticated request that changes anything must pass the CSRF check (403 csrf_failed).
   */
  async principalOf(check: SessionCheck): Promise<Principal | null> {
    if (!plausibleToken(check.token)) return null
    const session = await this.guard(findSession(this.sql, hashToken(check.token)))
    const now = Date.now()
    if (!session) return null
    if (sessionExpired(session.lastSeenAt, now)) {
      await this.guard(deleteSession(this.sql, session.id))
      return null
    }
    checkCsrf({ method: check.method, cookie: check.csrfCookie, header: check.csrfHeader, sessionCsrfHash: session.csrfHash })
    if (needsTouch(session.lastSeenAt, now)) touchSession(this.sql, session.id).catch(() => {})
    // a signed-in user may do whatever their memberships allow: every scope, no project or organization limit
    // (the fields personal keys carry when they are scoped)
    const principal = { userId: session.userId, userUuid: session.userUuid, keyId: session.id, scopes: ['*'], scopedTeams: null, scopedOrganizations: null }
    return principal
  }

  /**
   * GET /api/users/@me/: the user, their organization(s) and the projects they may see; asked with a key limited to
   * some projects or organizations, only those it reaches.
   */
  async me(userId: number, limits: Pick<Principal, 'scopedTeams' | 'scopedOrganizations'> = UNLIMITED) {
    const [user, allOrganizations, allProjects] = await this.guard(
      Promise.all([userSummary(this.sql, userId), organizationsOfUser(this.sql, userId), projectSummariesOfUser(this.sql, userId)]),
    )
    if (!user) throw errors.notAuthenticated()
    const { projects, organizations } = visibleTo(limits, allProjects, allOrganizations)
    const current = projects.find((p) => p.id === user.currentProjectId) ?? projects[0] ?? null
    const organization = organizations.find((o) => o.id === current?.organization) ?? organizations[0] ?? null
    return {
      id: user.id,
      uuid: user.uuid,
      distinct_id: user.distinctId,
      email: user.email,
      first_name: user.firstName,
      organization: organization ? { id: organization.id, name: organization.name, membership_level: organization.level } : null,
      organizations: organizations.map((o) => ({ id: o.id, name: o.name, membership_level: o.level })),
      projects,
      current_project: current?.id ?? null,
    }
  }

  /** Abandoned sessions are deleted at most once an hour, off the request path. */
  private sweep(): void {
    const now = Date.now()
    if (now - this.lastSweep < 60 * 60 * 1000) return
    this.lastSweep = now
    deleteIdleSessions(this.sql, SESSION_IDLE_MS).catch(() => {
      this.lastSweep = 0
    })
  }

  private async guard<T>(work: Promise<T>): Promise<T> {
    try {
      return await work
    } catch (error) {
      if (isConnectionError(error)) throw errors.databaseUnavailable()
      throw error
    }
  }
}

function invalidCredentials(): ApiError {
  return new ApiError(401, 'authentication_error', 'invalid_credentials', 'Invalid email or password.')
}
