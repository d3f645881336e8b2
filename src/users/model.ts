// TypeBox schemas of sign-in and the current user: the routes validate with them and the OpenAPI document shows them.
import { t } from 'elysia'
import { model } from '../http/openapi'

export const LoginBody = model(
  'LoginBody',
  t.Object({
    email: t.String({ minLength: 1, maxLength: 1000, description: 'the user’s email (case-insensitive)' }),
    password: t.String({ minLength: 1, maxLength: 4096, description: 'the user’s password' }),
  }),
)

const MembershipSummary = t.Object({
  id: t.String({ format: 'uuid' }),
  name: t.String(),
  membership_level: t.Integer({ description: '1 member, 8 admin, 15 owner' }),
})

export const Me = model(
  'Me',
  t.Object({
    id: t.Integer(),
    uuid: t.String({ format: 'uuid' }),
    distinct_id: t.String(),
    email: t.String(),
    first_name: t.String(),
    organization: t.Union([MembershipSummary, t.Null()], { description: 'the organization of the current project' }),
    organizations: t.Array(MembershipSummary),
    projects: t.Array(t.Object({ id: t.Integer(), name: t.String(), organization: t.String({ format: 'uuid' }) }), {
      description: 'every project the user may see (only their organizations’); asked with a key limited to some projects or organizations, only those it reaches',
    }),
    current_project: t.Union([t.Integer(), t.Null()]),
  }),
)

export const LoggedOut = model('LoggedOut', t.Object({ success: t.Boolean() }))
