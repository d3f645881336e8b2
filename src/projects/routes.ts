// GET /api/projects/, /api/projects/@current/, /api/projects/:project_id/; PATCH /api/projects/:project_id/
import { Elysia, t } from 'elysia'
import type { Sql } from 'postgres'
import type { PersonalKeyAuth } from './auth'
import { isoDate } from '../http/format'
import { personalKeyGuard, projectGuard } from './guards'
import { page, PageQuery, parsePaging, publicUrl } from '../http/pagination'
import type { RateLimiter } from '../http/rate-limit'
import { inTransaction } from '../db/postgres'
import { errors } from '../http/errors'
import { checkedBody } from '../http/openapi'
import { announceKeyChange } from './key-changes'
import { Project, ProjectPage, ProjectUpdate } from './model'
import { changeProjectSettings, type RecordingSettingsHooks } from './settings'
import { isOrganizationAdmin, projectsOfUser, resetProjectToken, type ProjectRow } from './repository'
import type { ProjectTokenCache } from './token-cache'

export function projectJson(p: ProjectRow) {
  return {
    id: p.id,
    uuid: p.uuid,
    organization: p.organizationId,
    name: p.name,
    // The project token is public by design (every web page using it ships it), so it is shown in clear.
    api_token: p.apiToken,
    api_token_hint: p.apiTokenMask,
    created_at: isoDate(p.createdAt),
    timezone: p.timezone,
    week_start_day: p.weekStartDay,
    ...p.recording,
  }
}

export function projectRoutes(deps: {
  sql: Sql
  auth: PersonalKeyAuth
  tokens: ProjectTokenCache
  limiter?: RateLimiter
  trustProxy: boolean
  /** the replay settings reach the clients' config (cached with the project's flags) */
  recordingSettings?: RecordingSettingsHooks
}) {
  const list = new Elysia({ name: 'projects' })
    .use(personalKeyGuard(deps.auth, deps.limiter))
    .get(
      '/api/projects/',
      async ({ principal, query, request }) => {
        const { limit, offset } = parsePaging(query)
        const { count, rows } = await projectsOfUser(deps.sql, principal.userId, limit, offset, { teams: principal.scopedTeams, organizations: principal.scopedOrganizations })
        return page(publicUrl(request, deps.trustProxy), count, limit, offset, rows.map(projectJson))
      },
      {
        query: t.Object(PageQuery),
        response: { 200: ProjectPage },
        detail: { summary: 'Projects the key’s user can see', tags: ['projects'] },
      },
    )

  const one = new Elysia({ name: 'project' })
    .use(projectGuard(deps.auth, deps.limiter))
    .get(
      '/api/projects/:project_id/',
      async ({ project }) => projectJson(project),
      {
        params: t.Object({ project_id: t.String({ description: 'numeric id or @current' }) }),
        response: { 200: Project },
        detail: { summary: 'One project', tags: ['projects'] },
      },
    )
    .patch(
      '/api/projects/:project_id/',
      async ({ principal, project, body }) => {
        await changeProjectSettings(deps.sql, project.id, body, deps.recordingSettings)
        return projectJson(await deps.auth.project(principal, String(project.id)))
      },
      {
        params: t.Object({ project_id: t.String({ description: 'numeric id or @current' }) }),
        response: { 200: Project },
        detail: {
          summary: 'Change the project’s timezone, first day of the week or session replay settings (the answer’s other members are ignored, unknown ones refused)',
          tags: ['projects'],
          requestBody: checkedBody(ProjectUpdate),
        },
      },
    )
    .patch(
      '/api/projects/:project_id/reset_token/',
      async ({ principal, project }) => {
        if (!(await isOrganizationAdmin(deps.sql, principal.userId, project.organizationId))) {
          throw errors.permissionDenied('Only organization admins can reset the project token.')
        }
        await deps.sql.begin(async (tx) => {
          await resetProjectToken(inTransaction(tx), project.id)
          await announceKeyChange(inTransaction(tx))
        })
        await deps.tokens.invalidate()
        return projectJson(await deps.auth.project(principal, String(project.id)))
      },
      {
        params: t.Object({ project_id: t.String({ description: 'numeric id or @current' }) }),
        response: { 200: Project },
        detail: {
          summary: 'A new project token (phc_…); the old one is refused at once on capture, /decide, /flags and remote config',
          tags: ['projects'],
        },
      },
    )
  return new Elysia({ name: 'project-routes' }).use(list).use(one)
}
