// /api/organizations/:organization_id/members/ (PostHog's paths; `@current` is the organization of the current
// project): list; POST adds a member (owners); PATCH /:user_uuid/ {level} (owners); DELETE /:user_uuid/ removes a
// member (owners; anyone may remove themselves). Documented in docs/members.md.
import { Elysia, t } from 'elysia'
import type { Sql } from 'postgres'
import { documentedAs } from '../http/openapi'
import { PageQuery, page, parsePaging, publicUrl } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import type { PersonalKeyAuth } from '../projects/auth'
import { personalKeyGuard } from '../projects/guards'
import { Member, MemberAdd, MemberPage, MemberUpdate } from './model'
import { MemberService } from './service'

export function memberRoutes(deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean }) {
  const members = new MemberService(deps.sql)
  const base = '/api/organizations/:organization_id/members'
  const params = t.Object({ organization_id: t.String({ description: 'the organization’s id (UUID) or @current' }) })
  const oneParams = t.Object({ organization_id: t.String(), user_uuid: t.String({ description: 'the member’s user uuid' }) })
  const tags = ['organizations']

  return new Elysia({ name: 'members' })
    .use(personalKeyGuard(deps.auth, deps.limiter))
    .get(
      `${base}/`,
      async ({ principal, params, query, request }) => {
        const organization = await members.organization(principal, params.organization_id)
        const { limit, offset } = parsePaging(query)
        const { count, results } = await members.list(organization, limit, offset)
        return page(publicUrl(request, deps.trustProxy), count, limit, offset, results)
      },
      { params, query: t.Object(PageQuery), response: { 200: MemberPage }, detail: { tags, summary: 'The organization’s members (owners first)' } },
    )
    .post(
      `${base}/`,
      async ({ principal, params, body, set }) => {
        const organization = await members.organization(principal, params.organization_id)
        const member = await members.add(principal, organization, body)
        set.status = 201
        return member
      },
      {
        params,
        body: documentedAs(MemberAdd),
        response: { 201: Member },
        detail: { tags, summary: 'Add a member (owners only): an existing user by email, or a new user with a first password' },
      },
    )
    .patch(
      `${base}/:user_uuid/`,
      async ({ principal, params, body }) => {
        const organization = await members.organization(principal, params.organization_id)
        return members.update(principal, organization, params.user_uuid, body)
      },
      {
        params: oneParams,
        body: documentedAs(MemberUpdate),
        response: { 200: Member },
        detail: { tags, summary: 'Change a member’s level (owners only; the last owner stays an owner)' },
      },
    )
    .delete(
      `${base}/:user_uuid/`,
      async ({ principal, params, set }) => {
        const organization = await members.organization(principal, params.organization_id)
        await members.remove(principal, organization, params.user_uuid)
        set.status = 204
      },
      { params: oneParams, detail: { tags, summary: 'Remove a member (owners only; a member may leave; the last owner may not)', responses: { 204: { description: 'removed (empty body)' } } } },
    )
}
