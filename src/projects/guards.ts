// Elysia plugins that authenticate a request before its handler runs (the personal key of the private API).
// Authentication lives with projects and keys: http/ stays plumbing.
import { Elysia } from 'elysia'
import type { PersonalKeyAuth, Principal } from './auth'
import type { ProjectRow } from './repository'
import type { RateLimiter } from '../http/rate-limit'
import { clientIp } from '../http/cors'
import { errors } from '../http/errors'
import { assertScope } from './scopes'

/** The path of a request URL (after the host), without the query. */
function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const end = url.indexOf('?', start)
  return start < 0 ? '/' : url.slice(start, end < 0 ? undefined : end)
}

/** The request's personal key (or console session) checked, and its rate limit taken: who is calling. */
async function principalOf(
  auth: PersonalKeyAuth,
  limiter: RateLimiter | undefined,
  request: Request,
  address: string | undefined,
): Promise<Principal> {
  const principal = await auth.authenticateRequest(request, clientIp(request, address, auth.trustProxy))
  // counted per user, not per key: rotating keys (create the next with the current one) buys no extra requests
  if (limiter) {
    const wait = limiter.take(`user:${principal.userId}`)
    if (wait > 0) throw errors.throttled(wait)
  }
  assertScope(principal.scopes, request.method, pathOf(request.url))
  return principal
}

/** Routes behind a personal API key get `principal`; a bad or missing key never reaches the handler. */
export function personalKeyGuard(auth: PersonalKeyAuth, limiter?: RateLimiter) {
  return new Elysia({ name: 'personal-key-guard' }).resolve({ as: 'scoped' }, async ({ request, server }) => ({
    principal: await principalOf(auth, limiter, request, server?.requestIP(request)?.address),
  }))
}

/**
 * Routes under `/api/projects/:project_id/` get `principal` and `project`: the project the id (or `@current`) names,
 * if the key's user may see it; otherwise the request ends (401, 404) before the handler runs.
 */
export function projectGuard(auth: PersonalKeyAuth, limiter?: RateLimiter) {
  return new Elysia({ name: 'project-guard' }).resolve({ as: 'scoped' }, async ({ request, server, params }) => {
    const principal = await principalOf(auth, limiter, request, server?.requestIP(request)?.address)
    const project: ProjectRow = await auth.project(principal, (params as Record<string, string>).project_id ?? '')
    return { principal, project }
  })
}
