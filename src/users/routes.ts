// POST /api/login/, POST /api/logout/, GET /api/users/@me/: the console's sign-in, through the public REST API.
import { Elysia } from 'elysia'
import type { BodyLimits } from '../http/body'
import type { PersonalKeyAuth } from '../projects/auth'
import { personalKeyGuard } from '../projects/guards'
import type { RateLimiter } from '../http/rate-limit'
import { clientIp } from '../http/cors'
import { publicUrl } from '../http/pagination'
import { documentedAnswer } from '../http/openapi'
import { readLoginBody } from './login-body'
import { LoggedOut, LoginBody, Me } from './model'
import { assertOwnOrigin } from './origin'
import { COOKIE_MAX_AGE_S, CSRF_COOKIE, CSRF_HEADER, csrfCookie, parseCookies, SESSION_COOKIE, sessionCookie } from './rules'
import type { UserService } from './service'

export interface UserRouteDeps {
  users: UserService
  auth: PersonalKeyAuth
  limiter?: RateLimiter
  trustProxy: boolean
  body: BodyLimits
  /** counts a browser write refused for its origin */
  originRefused?: () => void
}

const tags = ['users']


/**
 * POST /api/login/ and /api/logout/. Sign-in reads its own body (parse: 'none', login-body.ts): mount it where no
 * other parse hook reads the body first.
 */
export function signInRoutes(deps: UserRouteDeps) {
  // sign-in and sign-out set cookies: a page of another origin may not make a browser do either
  const fromOwnOrigin = (request: Request) => assertOwnOrigin(request, deps.trustProxy, deps.originRefused)
  // Secure behind https, also behind a TLS proxy that says so: a spoofed header only makes the caller's own cookie
  // stricter, so X-Forwarded-Proto counts here even without TRUST_PROXY
  const secureOf = (request: Request) =>
    publicUrl(request, deps.trustProxy).protocol === 'https:' || request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim() === 'https'
  const cookies = (request: Request, session: string, csrf: string, maxAgeSeconds: number) => {
    const options = { secure: secureOf(request), maxAgeSeconds }
    return [sessionCookie(session, options), csrfCookie(csrf, options)]
  }

  return new Elysia({ name: 'sign-in' })
    .post(
      '/api/login/',
      async ({ request, server, set }) => {
        fromOwnOrigin(request)
        const address = clientIp(request, server?.requestIP(request)?.address, deps.trustProxy)
        const body = await readLoginBody(request, deps.body, address)
        const opened = await deps.users.login(body.email, body.password, address)
        set.headers['set-cookie'] = cookies(request, opened.token, opened.csrfToken, COOKIE_MAX_AGE_S)
        set.headers['cache-control'] = 'no-store'
        return deps.users.me(opened.userId)
      },
      {
        // read here, within a small cap (login-body.ts), chunked bodies included
        parse: 'none',
        response: { 200: Me },
        detail: {
          summary: 'Sign in with email and password: sets the HttpOnly session cookie and the readable phog_csrftoken cookie',
          description: 'JSON only (415 otherwise); a browser request must come from a page of this server (403 csrf_failed otherwise).',
          tags,
          requestBody: { required: true, description: 'the user’s email and password', content: { 'application/json': { schema: LoginBody } } } as never,
          responses: documentedAnswer(Me),
        },
      },
    )
    .post(
      '/api/logout/',
      async ({ request, set }) => {
        fromOwnOrigin(request)
        const jar = parseCookies(request.headers.get('cookie'))
        const token = jar.get(SESSION_COOKIE)
        // a page on another site must not end a session: the same CSRF rule as every cookie-authenticated write
        if (token) await deps.users.principalOf({ token, method: 'POST', csrfCookie: jar.get(CSRF_COOKIE), csrfHeader: request.headers.get(CSRF_HEADER) })
        await deps.users.logout(token)
        set.headers['set-cookie'] = cookies(request, '', '', 0)
        set.headers['cache-control'] = 'no-store'
        return { success: true }
      },
      {
        response: { 200: LoggedOut },
        detail: { summary: 'End the session of the cookie and clear the cookies', tags },
      },
    )
}

/** GET /api/users/@me/: a session's or a key's user (a limited key sees only what it reaches). */
export function currentUserRoutes(deps: Pick<UserRouteDeps, 'users' | 'auth' | 'limiter'>) {
  return new Elysia({ name: 'users-me' })
    .use(personalKeyGuard(deps.auth, deps.limiter))
    .get('/api/users/@me/', ({ principal }) => deps.users.me(principal.userId, principal), {
      response: { 200: Me },
      detail: { summary: 'The signed-in user (or the personal key’s user): email, organization and projects', tags },
    })
}
