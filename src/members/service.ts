// Organization members: list, add (an existing user, or a new one with a first password), change a level, remove.
// Never sees the HTTP context; the rules of who may do what are in rules.ts.
import type { Sql } from 'postgres'
import { inTransaction, isConnectionError } from '../db/postgres'
import { errors } from '../http/errors'
import { UUID_PATTERN } from '../http/fields'
import type { Principal } from '../projects/auth'
import { insertUser, MEMBER, OWNER, validateEmail } from '../projects/accounts'
import { findUserByEmail } from '../projects/repository'
import { passwordProblem } from '../users/rules'
import { hashPassword } from '../users/service'
import { setPasswordHash } from '../users/repository'
import {
  currentOrganizationOf,
  deleteMember,
  insertMembership,
  levelOf,
  listMembers,
  lockedMember,
  memberOf,
  organizationHasAnyProject,
  passwordSetBy,
  setMemberLevel,
  type MemberRow,
} from './repository'
import { assertMemberChange, assertOwner, checkedLevel } from './rules'

export function memberJson(organizationId: string, m: MemberRow) {
  return {
    id: `${organizationId}:${m.uuid}`,
    user: { id: m.userId, uuid: m.uuid, distinct_id: m.distinctId, first_name: m.firstName, email: m.email, is_email_verified: m.isEmailVerified },
    level: m.level,
    joined_at: m.joinedAt.toISOString(),
    can_sign_in: m.canSignIn,
  }
}

type Caller = Pick<Principal, 'userId' | 'scopedTeams' | 'scopedOrganizations'>

function asObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.invalidPayload('The body must be a JSON object.')
  return body as Record<string, unknown>
}

function checkedUserUuid(value: string): string {
  if (!UUID_PATTERN.test(value)) throw errors.notFound()
  return value.toLowerCase()
}

export class MemberService {
  constructor(private readonly sql: Sql) {}

  /**
   * The organization `idParam` names (`@current`: the one of the caller's current project) if the caller is a member
   * and their key reaches it; 404 otherwise, as for a project the caller cannot see.
   */
  async organization(caller: Caller, idParam: string): Promise<string> {
    return this.guard(async () => {
      let id: string | null
      if (idParam === '@current') id = await currentOrganizationOf(this.sql, caller.userId)
      else if (UUID_PATTERN.test(idParam)) id = idParam.toLowerCase()
      else throw errors.notFound()
      if (id === null || (await levelOf(this.sql, id, caller.userId)) === null) throw errors.notFound()
      if (caller.scopedOrganizations && !caller.scopedOrganizations.includes(id)) throw errors.notFound()
      if (caller.scopedTeams && !(await organizationHasAnyProject(this.sql, id, caller.scopedTeams))) throw errors.notFound()
      return id
    })
  }

  async list(organizationId: string, limit: number, offset: number) {
    const { count, rows } = await this.guard(() => listMembers(this.sql, organizationId, limit, offset))
    return { count, results: rows.map((m) => memberJson(organizationId, m)) }
  }

  /**
   * An owner adds a member: an existing user by email joins at `level` (default member); an unknown email becomes a
   * user with the given first password, who signs in with it (phog sends no email, so there is no invite link).
   */
  async add(caller: Caller, organizationId: string, rawBody: unknown) {
    const body = asObject(rawBody)
    for (const key of Object.keys(body)) {
      if (!['email', 'level', 'password'].includes(key)) throw errors.validation('invalid_input', `Unknown member ${key}.`, key)
    }
    const email = validateEmail(body.email)
    const level = body.level === undefined ? MEMBER : checkedLevel(body.level)
    const password = body.password
    if (password !== undefined && typeof password !== 'string') throw errors.validation('invalid_input', 'password must be a string.', 'password')
    const problem = password === undefined ? null : passwordProblem(password)
    if (problem) throw errors.validation('invalid_input', problem, 'password')
    assertOwner(await this.guard(() => levelOf(this.sql, organizationId, caller.userId)), 'add members')
    const passwordHash = password === undefined ? null : await hashPassword(password)
    const userId = await this.guard(() =>
      this.sql.begin(async (transaction) => {
        const tx = inTransaction(transaction)
        const existing = await findUserByEmail(tx, email)
        if (existing) {
          if (passwordHash) throw errors.validation('invalid_input', `${email} already has an account: add them without a password.`, 'password')
          // a password someone else chose for them: only that person's own organizations may take the account in
          const setBy = await passwordSetBy(tx, existing.id)
          if (setBy !== null && setBy !== caller.userId && (await levelOf(tx, organizationId, setBy)) !== OWNER) {
            throw errors.permissionDenied(`${email}'s password was chosen by an owner of another organization: they must set their own password (\`npm run -s cli -- user set-password\`) before joining this one.`)
          }
          if (!(await insertMembership(tx, organizationId, existing.id, level))) {
            throw errors.validation('unique', `${email} is already a member of this organization.`, 'email')
          }
          return existing.id
        }
        if (!passwordHash) throw errors.validation('required', `No user has the email ${email}: give them a first password to sign in with.`, 'password')
        const created = await insertUser(tx, { email, organizationId, level })
        await setPasswordHash(tx, email, passwordHash, caller.userId)
        return created.id
      }) as Promise<number>,
    )
    return memberJson(organizationId, (await this.guard(() => memberOf(this.sql, organizationId, userId)))!)
  }

  async update(caller: Caller, organizationId: string, userUuid: string, rawBody: unknown) {
    const body = asObject(rawBody)
    const level = checkedLevel(body.level)
    return this.change(caller, organizationId, userUuid, level)
  }

  async remove(caller: Caller, organizationId: string, userUuid: string): Promise<void> {
    await this.change(caller, organizationId, userUuid, null)
  }

  /** A level change (or a removal, level null) under the organization's membership lock, so it always keeps an owner. */
  private async change(caller: Caller, organizationId: string, userUuid: string, newLevel: number | null) {
    const uuid = checkedUserUuid(userUuid)
    const changed = await this.guard(() =>
      this.sql.begin(async (transaction) => {
        const tx = inTransaction(transaction)
        const { member, owners } = await lockedMember(tx, organizationId, uuid)
        if (!member) throw errors.notFound()
        const actorLevel = await levelOf(tx, organizationId, caller.userId)
        assertMemberChange({ actorId: caller.userId, actorLevel, targetId: member.userId, targetLevel: member.level, newLevel, owners })
        if (newLevel === null) await deleteMember(tx, organizationId, member.userId)
        else await setMemberLevel(tx, organizationId, member.userId, newLevel)
        return { ...member, level: newLevel ?? member.level }
      }) as Promise<MemberRow>,
    )
    return memberJson(organizationId, changed)
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      if (isConnectionError(error)) throw errors.databaseUnavailable()
      throw error
    }
  }
}
