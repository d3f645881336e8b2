// The private API's second way in: the console's session cookie, read from the request (with its CSRF header).
import type { Principal, SessionResolver } from '../projects/auth'
import { CSRF_COOKIE, CSRF_HEADER, parseCookies, SESSION_COOKIE } from './rules'
import type { UserService } from './service'

export class SessionCookieResolver implements SessionResolver {
  constructor(private readonly users: UserService) {}

  async principalOf(request: Request): Promise<Principal | null> {
    const header = request.headers.get('cookie')
    if (!header || !header.includes(SESSION_COOKIE)) return null
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
