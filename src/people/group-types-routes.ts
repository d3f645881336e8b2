// /api/projects/:project_id/groups_types/ (PostHog's path, personal key): list, name (one, or several with
// update_metadata), delete; the names deletion blocked: list (blocked/) and unblock.
import { Elysia, t } from 'elysia'
import type { Sql } from 'postgres'
import type { PersonalKeyAuth } from '../projects/auth'
import type { RateLimiter } from '../http/rate-limit'
import { projectGuard } from '../projects/guards'
import { BlockedGroupTypeList, GroupType, GroupTypeDeleted, GroupTypeList, GroupTypeNames, GroupTypeNamesBulk, GroupTypeUnblock, GroupTypeUnblocked } from './group-types-model'
import { GroupTypeService, parseGroupTypeIndex } from './group-types-service'

export function groupTypeRoutes(
  deps: { sql: Sql; auth: PersonalKeyAuth; limiter?: RateLimiter } & ConstructorParameters<typeof GroupTypeService>[0],
) {
  const service = new GroupTypeService(deps)
  const base = '/api/projects/:project_id/groups_types'
  const tags = ['group types']
  const params = t.Object({ project_id: t.String({ description: 'numeric id or @current' }) })
  const indexParams = t.Object({ project_id: t.String(), group_type_index: t.String({ description: '0–4' }) })
  return new Elysia({ name: 'group-types' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(`${base}/`, ({ project }) => service.list(project.id), {
      params,
      response: { 200: GroupTypeList },
      detail: { tags, summary: 'The project’s group types, by index' },
    })
    .get(`${base}/blocked/`, ({ project }) => service.listBlocked(project.id), {
      params,
      response: { 200: BlockedGroupTypeList },
      detail: { tags, summary: 'Deleted group types: events naming one take no slot until it is unblocked' },
    })
    .post(`${base}/unblock/`, ({ project, body }) => service.unblock(project.id, body.group_type), {
      params,
      body: GroupTypeUnblock,
      response: { 200: GroupTypeUnblocked },
      detail: { tags, summary: 'Let events name a deleted group type again (it takes the lowest free index)' },
    })
    .patch(`${base}/update_metadata/`, ({ project, body }) => service.rename(project.id, body), {
      params,
      body: GroupTypeNamesBulk,
      response: { 200: GroupTypeList },
      detail: { tags, summary: 'Name several group types at once' },
    })
    .patch(
      `${base}/:group_type_index/`,
      async ({ project, params, body }) => (await service.rename(project.id, [{ group_type_index: parseGroupTypeIndex(params.group_type_index), ...body }]))[0],
      { params: indexParams, body: GroupTypeNames, response: { 200: GroupType }, detail: { tags, summary: 'Name a group type' } },
    )
    .delete(
      `${base}/:group_type_index/`,
      ({ project, params }) => service.remove(project.id, parseGroupTypeIndex(params.group_type_index)),
      {
        params: indexParams,
        response: { 200: GroupTypeDeleted },
        detail: { tags, summary: 'Delete a group type, its groups and its group property definitions; the index is free again' },
      },
    )
}
