// POST /api/login/, POST /api/logout/, GET /api/users/@me/: the console's sign-in, through the public REST API.
import { Elysia } from 'elysia'
import type { PersonalKeyAuth } from '../projects/auth'
import { personalKeyGuard } from '../projects/guards'
import type { RateLimiter } from '../http/rate-limit'
import { clientIp } from '../http/cors'
import { publicUrl } from '../http/pagination'
import { LoggedOut, LoginBody, Me } from './model'
import { COOKIE_MAX_AGE_S, CSRF_COOKIE, CSRF_HEADER, csrfCookie, parseCookies, SESSION_COOKIE, sessionCookie } from './rules'
import type { UserService } from './service'

export function userRoutes(deps: { users: UserService; auth: PersonalKeyAuth; limiter?: RateLimiter; trustProxy: boolean }) {
  const tags = ['users']
  // Secure behind https, also behind a TLS proxy that says so: a spoofed header only makes the caller's own cookie
  // stricter, so X-Forwarded-Proto counts here even without TRUST_PROXY
  const secureOf = (request: Request) =>
    publicUrl(request, deps.trustProxy).protocol === 'https:' || request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim() === 'https'
  const cookies = (request: Request, session: string, csrf: string, maxAgeSeconds: number) => {
    const options = { secure: secureOf(request), maxAgeSeconds }
    return [sessionCookie(session, options), csrfCookie(csrf, options)]
  }

  const signIn = new Elysia({ name: 'sign-in' })
    .post(
      '/api/login/',
      async ({ body, request, server, set }) => {
        const address = clientIp(request, server?.requestIP(request)?.address, deps.trustProxy)
        const opened = await deps.users.login(body.email, body.password, address)
        set.headers['set-cookie'] = cookies(request, opened.token, opened.csrfToken, COOKIE_MAX_AGE_S)
        set.headers['cache-control'] = 'no-store'
        return deps.users.me(opened.userId)
      },
      {
        body: LoginBody,
        response: { 200: Me },
        detail: {
          summary: 'Sign in with email and password: sets the HttpOnly session cookie and the readable phog_csrftoken cookie',
          tags,
        },
      },
    )
    .post(
      '/api/logout/',
      async ({ request, set }) => {
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

  const me = new Elysia({ name: 'users-me' })
    .use(personalKeyGuard(deps.auth, deps.limiter))
    .get('/api/users/@me/', ({ principal }) => deps.users.me(principal.userId, principal), {
      response: { 200: Me },
      detail: { summary: 'The signed-in user (or the personal key’s user): email, organization and projects', tags },
    })
  return new Elysia({ name: 'user-routes' }).use(signIn).use(me)
}
