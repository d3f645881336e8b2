// Organizations and users as an admin places them (the CLI now, the console later): one place that validates and
// writes them, never through the HTTP context. A user is a member of exactly the organizations it is added to;
// nothing here makes anyone an owner by accident.
import type { Sql } from 'postgres'
import { errors } from '../http/errors'
import { UUID_PATTERN } from '../http/fields'
import { defaultOrganizationId, findUserByEmail } from './repository'

export const MAX_ORGANIZATION_NAME = 200
export const MAX_EMAIL_LENGTH = 254
/** PostHog's organization levels */
export const MEMBER = 1
export const ADMIN = 8
export const OWNER = 15

const EMAIL = /^[^\s@]+@[^\s@]+$/

export function validateEmail(email: unknown): string {
  if (typeof email !== 'string' || email.trim() === '') throw errors.validation('required', 'An email is required.', 'email')
  const trimmed = email.trim()
  if (trimmed.length > MAX_EMAIL_LENGTH || !EMAIL.test(trimmed)) throw errors.validation('invalid_input', 'Enter a valid email address.', 'email')
  // one spelling per address: sign-in (users/) compares lower-cased emails too
  return trimmed.toLowerCase()
}

export async function createOrganization(sql: Sql, input: { name: unknown }): Promise<{ id: string; name: string }> {
  const name = typeof input.name === 'string' ? input.name.trim() : ''
  if (name === '') throw errors.validation('blank', 'An organization needs a name.', 'name')
  if (name.length > MAX_ORGANIZATION_NAME) throw errors.validation('max_length', `Ensure this field has no more than ${MAX_ORGANIZATION_NAME} characters.`, 'name')
  const [row] = await sql<{ id: string; name: string }[]>`insert into organizations (name) values (${name}) returning id, name`
  return row
}

/**
 * A new user, member of one organization (the given one, or the first organization when there is only the
 * default) at `level` (unless said otherwise: the owner when it is the organization's first member, else a member). Refused when the email is taken or the organization unknown.
 */
export async function createUser(
  sql: Sql,
  input: { email: unknown; organizationId?: string; level?: number },
): Promise<{ id: number; email: string; organization: string }> {
  const email = validateEmail(input.email)
  const level = input.level
  if (level !== undefined && ![MEMBER, ADMIN, OWNER].includes(level)) throw errors.validation('invalid_input', 'level must be 1 (member), 8 (admin) or 15 (owner).', 'level')
  if (input.organizationId !== undefined && !UUID_PATTERN.test(input.organizationId)) {
    throw errors.validation('invalid_input', 'The organization must be an organization id (a UUID).', 'organization')
  }
  return (await sql.begin((tx) => insertUser(tx as unknown as Sql, { ...input, email, level }))) as { id: number; email: string; organization: string }
}

/** createUser inside a transaction the caller holds (input already validated). */
export async function insertUser(
  t: Sql,
  input: { email: string; organizationId?: string; level?: number },
): Promise<{ id: number; email: string; organization: string }> {
  const { email } = input
  let organizationId = input.organizationId
  if (organizationId !== undefined) {
    const [found] = await t`select id from organizations where id = ${organizationId}`
    if (!found) throw errors.validation('does_not_exist', `No organization has the id ${organizationId}.`, 'organization')
  } else {
    organizationId = await defaultOrganizationId(t)
  }
  if (await findUserByEmail(t, email)) throw errors.validation('unique', `A user with the email ${email} already exists.`, 'email')
  const [firstProject] = await t<{ id: number }[]>`select id from projects where organization_id = ${organizationId} order by id limit 1`
  const [user] = await t<{ id: number }[]>`
    insert into users (distinct_id, email, first_name, current_project_id)
    values (${crypto.randomUUID()}, ${email}, ${email.split('@')[0]}, ${firstProject?.id ?? null})
    returning id`
  // unless told: the first member of an organization owns it (someone must be able to manage it), later ones are members
  const [{ members }] = await t<{ members: number }[]>`select count(*)::int as members from organization_members where organization_id = ${organizationId}`
  const level = input.level ?? (members === 0 ? OWNER : MEMBER)
  await t`insert into organization_members (organization_id, user_id, level) values (${organizationId}, ${user.id}, ${level})`
  return { id: user.id, email, organization: organizationId }
}

/** The user an admin names by email, or a clear refusal (never created on the way). */
export async function existingUser(sql: Sql, email: string): Promise<{ id: number; email: string }> {
  const user = await findUserByEmail(sql, validateEmail(email))
  if (!user) throw errors.validation('does_not_exist', `No user has the email ${email}: create it first (user create --email ${email}).`, 'email')
  return { id: user.id, email: user.email }
}
