// Who may change an organization's members, and into what: pure rules, unit-tested in rules.test.ts.
// Only an owner adds, re-levels or removes members (a member may also leave); an organization always keeps an owner.
import { errors } from '../http/errors'
import { ADMIN, MEMBER, OWNER } from '../projects/accounts'

export const LEVELS = [MEMBER, ADMIN, OWNER] as const

export function checkedLevel(value: unknown): number {
  if (typeof value !== 'number' || !(LEVELS as readonly number[]).includes(value)) {
    throw errors.validation('invalid_choice', 'level must be 1 (member), 8 (admin) or 15 (owner).', 'level')
  }
  return value
}

export function assertOwner(actorLevel: number | null, doing: string): void {
  if (actorLevel !== OWNER) throw errors.permissionDenied(`Only the organization's owners can ${doing}.`)
}

/**
 * A change of `target`'s level (or its removal, newLevel null) by `actor`: an owner may do either to anyone; anyone
 * may remove themselves (leave). The last owner can neither leave nor step down: someone must manage the organization.
 */
export function assertMemberChange(input: {
  actorId: number
  actorLevel: number | null
  targetId: number
  targetLevel: number
  newLevel: number | null
  owners: number
}): void {
  const leaving = input.newLevel === null && input.actorId === input.targetId
  if (!leaving) assertOwner(input.actorLevel, input.newLevel === null ? 'remove members' : "change members' roles")
  const losesOwner = input.targetLevel === OWNER && input.newLevel !== OWNER
  if (losesOwner && input.owners <= 1) {
    throw errors.validation('last_owner', 'The organization needs an owner: make another member an owner first.', 'level')
  }
}
