// Elysia plugins that authenticate a request before its handler runs (the personal key of the private API).
// Authentication lives with projects and keys: http/ stays plumbing.
import { Elysia } from 'elysia'
import { findPersonalKey, type PersonalKeyAuth, type Principal } from './auth'
import type { RateLimiter } from '../http/rate-limit'
import { clientIp } from '../http/cors'
import { errors } from '../http/errors'

/** Routes behind a personal API key get `principal`; a bad or missing key never reaches the handler. */
export function personalKeyGuard(auth: PersonalKeyAuth, limiter?: RateLimiter) {
  return new Elysia({ name: 'personal-key-guard' }).resolve({ as: 'scoped' }, async ({ request, headers, server }) => {
    const query = request.url.includes('personal_api_key=') ? new URL(request.url).searchParams : null
    const address = clientIp(request, server?.requestIP(request)?.address, auth.trustProxy)
    const principal: Principal = await auth.authenticate(findPersonalKey(headers.authorization, query), address)
    if (limiter) {
      const wait = limiter.take(principal.keyId)
      if (wait > 0) throw errors.throttled(wait)
    }
    return { principal }
  })
}
