// The project a public endpoint's key points at (capture, /decide, /flags): a project key, or a personal key
// with project_id (docs/compatibility.md#public-key-errors), with the public endpoints' errors.
import type { PersonalKeyAuth } from './auth'
import { ApiError, errors } from '../http/errors'
import { plausibleKey } from './keys'
import type { ProjectTokenCache } from './token-cache'

export async function projectOfPublicKey(
  deps: { auth: PersonalKeyAuth; tokens: ProjectTokenCache },
  token: string,
  projectId: unknown,
): Promise<number> {
  if (!plausibleKey(token)) throw token.startsWith('phx_') ? errors.invalidPersonalKey('body') : errors.invalidApiKey()
  if (!token.startsWith('phx_')) return deps.tokens.cached(token) ?? (await deps.tokens.resolve(token))
  if (projectId === undefined || projectId === null || projectId === '') throw errors.invalidProject()
  try {
    // Public endpoints do not pass the client address down: their unknown personal keys share one throttle bucket,
    // which bounds the Postgres lookups they can cause (a key seen valid recently is still looked up).
    const principal = await deps.auth.authenticate({ key: token, source: 'body' }, 'public endpoints')
    return (await deps.auth.project(principal, String(projectId))).id
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    if (error.status === 404) throw errors.invalidProject()
    // the key or its project could not be read: the team cannot be fetched (503 fetch_team_fail)
    if (error.code === 'database_unavailable') throw errors.fetchTeamFail()
    throw error
  }
}
