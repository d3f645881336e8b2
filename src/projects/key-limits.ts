// What a limited personal key may do with keys: a key never makes a key wider than itself, and a key limited to some
// projects, organizations or scopes manages no key but itself. Pure rules, unit-tested in key-limits.test.ts; the
// service (personal-keys.ts) applies them with the caller's principal. See docs/keys-and-limits.md.
import { errors } from '../http/errors'
import { hasScope } from './scopes'

/** Who asks: a key's (or a console session's, which is unrestricted) scopes and limits. */
export interface KeyHolder {
  keyId: string
  scopes: readonly string[]
  scopedTeams: readonly number[] | null
  scopedOrganizations: readonly string[] | null
}

/** The limits a new key asks for, as validated: undefined when the request does not name them. */
export interface RequestedLimits {
  scopes: string[]
  scopedTeams: number[] | null | undefined
  scopedOrganizations: string[] | null | undefined
}

export interface GrantedLimits {
  scopes: string[]
  scopedTeams: number[] | null
  scopedOrganizations: string[] | null
}

/** Every scope, every project and organization of its user: a console session or a `*` key without limits. */
export function isUnrestricted(holder: KeyHolder): boolean {
  return holder.scopes.includes('*') && holder.scopedTeams === null && holder.scopedOrganizations === null
}

function within<T>(requested: readonly T[], allowed: readonly T[]): boolean {
  return requested.every((v) => allowed.includes(v))
}

/**
 * The limits of a key `holder` creates. An unrestricted holder gets what it asks for. A limited one: each scope must
 * be one it holds; `scoped_teams` / `scoped_organizations` left out inherit the holder's own list, and a list given
 * must be within the holder's (null or [] asks for every project: wider, refused).
 */
export function limitsForNewKey(holder: KeyHolder, requested: RequestedLimits): GrantedLimits {
  if (isUnrestricted(holder)) {
    return { scopes: requested.scopes, scopedTeams: requested.scopedTeams ?? null, scopedOrganizations: requested.scopedOrganizations ?? null }
  }
  const wider = requested.scopes.filter((s) => !hasScope(holder.scopes, s))
  if (wider.length > 0) {
    throw errors.permissionDenied(`A key cannot create a key wider than itself: it does not hold the scope ${wider.map((s) => `'${s}'`).join(', ')}.`)
  }
  return {
    scopes: requested.scopes,
    scopedTeams: narrowed(holder.scopedTeams, requested.scopedTeams, 'scoped_teams', 'projects'),
    scopedOrganizations: narrowed(holder.scopedOrganizations, requested.scopedOrganizations, 'scoped_organizations', 'organizations'),
  }
}

function narrowed<T>(own: readonly T[] | null, asked: T[] | null | undefined, field: string, what: string): T[] | null {
  if (own === null) return asked ?? null
  if (asked === undefined) return [...own]
  if (asked === null) {
    throw errors.permissionDenied(`A key limited to some ${what} cannot create a key for all ${what}: leave ${field} out to inherit its own (${own.join(', ')}), or name some of them.`)
  }
  if (!within(asked, own)) {
    throw errors.permissionDenied(`A key cannot create a key wider than itself: ${field} must be within its own (${own.join(', ')}).`)
  }
  return asked
}

/** Rolling or revoking a key: an unrestricted holder may touch any of its user's keys, a limited key only itself. */
export function assertMayManage(holder: KeyHolder, targetKeyId: string): void {
  if (isUnrestricted(holder) || holder.keyId === targetKeyId) return
  throw errors.permissionDenied(
    'A key limited to some scopes, projects or organizations may roll or revoke only itself: use the console or an unrestricted key of the same user.',
  )
}

/** What @me may show a holder: only the projects it reaches, and the organizations they (or its limits) name. */
export function visibleTo<P extends { id: number; organization: string }, O extends { id: string }>(
  holder: Pick<KeyHolder, 'scopedTeams' | 'scopedOrganizations'>,
  projects: readonly P[],
  organizations: readonly O[],
): { projects: P[]; organizations: O[] } {
  const { scopedTeams, scopedOrganizations } = holder
  const reachable = projects.filter(
    (p) => (scopedTeams === null || scopedTeams.includes(p.id)) && (scopedOrganizations === null || scopedOrganizations.includes(p.organization)),
  )
  if (scopedTeams === null && scopedOrganizations === null) return { projects: [...projects], organizations: [...organizations] }
  const orgs = organizations.filter((o) =>
    scopedTeams === null ? scopedOrganizations!.includes(o.id) : reachable.some((p) => p.organization === o.id),
  )
  return { projects: reachable, organizations: orgs }
}
