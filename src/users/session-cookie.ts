// The private API's second way in: the console's session cookie, read from the request (with its CSRF header).
import type { Principal, SessionResolver } from '../projects/auth'
import { assertOwnOrigin } from './origin'
import { changesSomething, CSRF_COOKIE, CSRF_HEADER, parseCookies, SESSION_COOKIE } from './rules'
import type { UserService } from './service'

export class SessionCookieResolver implements SessionResolver {
  constructor(
    private readonly users: UserService,
    private readonly options: { trustProxy: boolean; originRefused?: () => void } = { trustProxy: false },
  ) {}

  async principalOf(request: Request): Promise<Principal | null> {
    const header = request.headers.get('cookie')
    if (!header || !header.includes(SESSION_COOKIE)) return null
    // a write the browser sent with the cookie from a page of another origin: refused before the session is looked up
    if (changesSomething(request.method)) assertOwnOrigin(request, this.options.trustProxy, this.options.originRefused)
    const jar = parseCookies(header)
    return this.users.principalOf({
      token: jar.get(SESSION_COOKIE),
      method: request.method,
      csrfCookie: jar.get(CSRF_COOKIE),
      csrfHeader: request.headers.get(CSRF_HEADER),
    })
  }
}

/** Sign-in and sign-out read their own bodies and cookies: the private API's early key check passes them by. */
export function isSignInPath(url: string): boolean {
  const path = url.slice(url.indexOf('/', 8)).split('?')[0]
  return path === '/api/login' || path === '/api/login/' || path === '/api/logout' || path === '/api/logout/'
}
