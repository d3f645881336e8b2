// Where a browser write comes from: sign-in and sign-out (which set cookies) and every cookie-authenticated write
// must come from a page of this server. A browser names the page's origin in `Origin` (or, when it leaves that out,
// in `Referer`); one that names another origin gets 403 csrf_failed. A request with neither (curl, scripts, SDKs)
// is not a browser's and passes: a cookie-authenticated write still needs its X-CSRFToken header.
import { publicUrl } from '../http/pagination'
import { csrfFailed } from './rules'

/** The origin of an Origin or Referer value, or null when it names none (`Origin: null`, junk). */
function originOf(value: string): string | null {
  try {
    const origin = new URL(value).origin
    return origin === 'null' ? null : origin
  } catch {
    return null
  }
}

/**
 * This server's own origins as the browser sees them: the request's URL (behind TRUST_PROXY, the one
 * X-Forwarded-Host / X-Forwarded-Proto name). Without TRUST_PROXY a TLS proxy that says X-Forwarded-Proto: https is
 * believed for the scheme, as the Secure cookie flag believes it: a page on another site cannot set that header on
 * a browser's request, so it widens nothing an attacker can use.
 */
export function ownOrigins(request: Request, trustProxy: boolean): string[] {
  const url = publicUrl(request, trustProxy)
  const origins = [url.origin]
  const proto = request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim()
  if (!trustProxy && proto === 'https' && url.protocol === 'http:') origins.push(`https://${url.host}`)
  return origins
}

/** Why the request's Origin (or Referer) is not this server's, or null when it is (or when it names none). */
export function foreignOrigin(request: Request, trustProxy: boolean): string | null {
  const origin = request.headers.get('origin')
  const referer = origin === null ? request.headers.get('referer') : null
  if (origin === null && referer === null) return null
  const claimed = originOf((origin ?? referer)!)
  if (claimed !== null && ownOrigins(request, trustProxy).includes(claimed)) return null
  return origin !== null ? 'Origin checking failed - the request’s origin is not this server’s.' : 'Referer checking failed - the referring page is not on this server.'
}

/** 403 csrf_failed for a browser write from a page of another origin (`refused` counts it). */
export function assertOwnOrigin(request: Request, trustProxy: boolean, refused?: () => void): void {
  const problem = foreignOrigin(request, trustProxy)
  if (!problem) return
  refused?.()
  throw csrfFailed(problem)
}
