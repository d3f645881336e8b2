// The project a public endpoint's key points at (capture, /decide, /flags): a project key, or a personal key
// with project_id (docs/compatibility.md#public-key-errors), with the public endpoints' errors.
import { hasScope } from './scopes'
import type { PersonalKeyAuth } from './auth'
import { ApiError, errors } from '../http/errors'
import { plausibleKey } from './keys'
import type { ProjectTokenCache } from './token-cache'

type KeyDeps = { auth: PersonalKeyAuth; tokens: ProjectTokenCache }

/**
 * The project id; a number without a promise for a project key already known (every request of a running
 * service after its first), so the hot paths take no extra turn of the event loop. Refusals are thrown.
 */
export function projectOfPublicKey(
  deps: KeyDeps,
  token: string,
  projectId: unknown,
  clientAddress: string | null = null,
  /** the scope a personal key needs here (`*` for capture, `feature_flag:read` for /decide and /flags) */
  scope = '*',
): number | Promise<number> {
  if (!plausibleKey(token)) throw token.startsWith('phx_') ? errors.invalidPersonalKey('body') : errors.invalidApiKey()
  if (!token.startsWith('phx_')) return deps.tokens.cached(token) ?? deps.tokens.resolve(token)
  return projectOfPersonalKey(deps, token, projectId, clientAddress, scope)
}

async function projectOfPersonalKey(deps: KeyDeps, token: string, projectId: unknown, clientAddress: string | null, scope: string): Promise<number> {
  if (projectId === undefined || projectId === null || projectId === '') throw errors.invalidProject()
  try {
    // unknown personal keys are throttled per client address (one shared bucket only for requests without one),
    // which bounds the Postgres lookups they cause without letting one address lock everybody out
    const principal = await deps.auth.authenticate({ key: token, source: 'body' }, clientAddress ?? 'public endpoints')
    if (!hasScope(principal.scopes, scope)) {
      throw errors.permissionDenied(scope === '*' ? 'Capturing with a personal API key needs the scope "*" (all access).' : `API key missing required scope '${scope}'`)
    }
    return (await deps.auth.project(principal, String(projectId))).id
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    if (error.status === 404) throw errors.invalidProject()
    // the key or its project could not be read: the team cannot be fetched (503 fetch_team_fail)
    if (error.code === 'database_unavailable') throw errors.fetchTeamFail()
    throw error
  }
}
