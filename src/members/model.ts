// TypeBox schemas of organization members: what the routes answer, and the bodies the service checks member by
// member (so each refusal names its `attr`); the OpenAPI document shows them.
import { t } from 'elysia'
import { model } from '../http/openapi'
import { pageModel } from '../http/pagination'

const Level = t.Integer({ description: '1 member, 8 admin, 15 owner (PostHog’s organization levels)' })

export const Member = model(
  'OrganizationMember',
  t.Object({
    id: t.String({ description: 'the membership: the organization’s id and the user’s uuid' }),
    user: t.Object({
      id: t.Integer(),
      uuid: t.String({ format: 'uuid' }),
      distinct_id: t.String(),
      first_name: t.String(),
      email: t.String(),
      is_email_verified: t.Boolean(),
    }),
    level: Level,
    joined_at: t.String({ format: 'date-time' }),
    can_sign_in: t.Boolean({ description: 'false for a user without a password (a key holder such as the CLI’s admin@localhost)' }),
  }),
)

export const MemberPage = pageModel('PaginatedOrganizationMemberList', Member)

export const MemberAdd = model(
  'OrganizationMemberAdd',
  t.Object({
    email: t.String({ description: 'an existing user joins; a new email makes a user (then password is required)' }),
    level: t.Optional(Level),
    password: t.Optional(t.String({ description: 'the new user’s first password (8 to 1024 characters); refused for an existing user' })),
  }),
)

export const MemberUpdate = model('OrganizationMemberUpdate', t.Object({ level: Level }))
