// Permissive CORS for the public endpoints, as PostHog's: the caller's origin and headers mirrored,
// credentials allowed (posthog-js sends cookies with some requests).
export function corsHeaders(request: Request): Record<string, string> {
  return setCorsHeaders({}, request)
}

/** The public endpoints' CORS headers written into `headers` (every capture and /decide request: no object between). */
export function setCorsHeaders(headers: Record<string, string | number>, request: Request): Record<string, string> {
  headers['access-control-allow-origin'] = request.headers.get('origin') || '*'
  headers['access-control-allow-credentials'] = 'true'
  headers.vary = 'Origin'
  return headers as Record<string, string>
}

export function preflightHeaders(request: Request, methods = 'GET, POST, OPTIONS', defaultHeaders = 'content-type'): Record<string, string> {
  return {
    ...corsHeaders(request),
    'access-control-allow-methods': methods,
    'access-control-allow-headers': request.headers.get('access-control-request-headers') || defaultHeaders,
    'access-control-max-age': '86400',
  }
}

/**
 * The client's address: the socket peer, or behind trusted proxies (`trustProxy`: true for one, or how many) the
 * X-Forwarded-For entry the outermost of them appended: each proxy appends the address it saw, so the last
 * `hops` entries are trustworthy and anything before them is whatever the client wrote.
 */
export function clientIp(request: Request, peer: string | null | undefined, trustProxy: boolean | number): string | null {
  const hops = trustProxy === true ? 1 : trustProxy === false ? 0 : trustProxy
  if (hops > 0) {
    const header = request.headers.get('x-forwarded-for')
    const entries = header ? header.split(',') : []
    const forwarded = entries[Math.max(0, entries.length - hops)]?.trim()
    if (forwarded) return forwarded.replace(/^(\d+\.\d+\.\d+\.\d+):\d+$/, '$1')
  }
  if (!peer) return null
  return peer.startsWith('::ffff:') ? peer.slice(7) : peer
}

// The query string parsed last and its parameters: clients send the same one on every request (`?v=3`,
// `?v=2&config=true`, `?ip=1&_=…` aside), so most requests parse none. Shared: nobody may change them.
let lastQuery = ''
let lastParams = new URLSearchParams()

/** The request's query parameters (read-only: requests with the same query string share them). */
export function queryOf(request: Request): URLSearchParams {
  const url = request.url
  const q = url.indexOf('?')
  const text = q === -1 ? '' : url.slice(q + 1)
  if (text !== lastQuery) {
    lastParams = new URLSearchParams(text)
    lastQuery = text
  }
  return lastParams
}

/**
 * The private API answers other origins too (an admin tool with a Bearer key), but never with credentials: the
 * console's session cookie must not let a page on another origin (even a sibling subdomain) read what it answers.
 */
export function privateApiCorsHeaders(request: Request): Record<string, string> {
  const { 'access-control-allow-credentials': _credentials, ...headers } = corsHeaders(request)
  return headers
}

/** Preflight of the private API: a browser admin tool on another origin may call it with a Bearer key. */
export function apiPreflightHeaders(request: Request): Record<string, string> {
  const { 'access-control-allow-credentials': _credentials, ...headers } = preflightHeaders(request, 'GET, POST, PUT, PATCH, DELETE, OPTIONS', 'authorization, content-type')
  return headers
}

// What browsers call from any page: capture (and recordings), /decide and /flags, remote config, posthog-js's scripts
// and its survey list.
const PUBLIC_PREFIXES = ['/capture', '/batch', '/e', '/i/v0/e', '/track', '/engage', '/s', '/decide', '/flags', '/array/', '/static/', '/api/surveys']

/** The path (of a full request URL) is one of the public, browser-facing endpoints. */
export function isPublicEndpoint(url: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  for (const prefix of PUBLIC_PREFIXES) {
    if (!url.startsWith(prefix, start)) continue
    const next = url[start + prefix.length]
    if (prefix.endsWith('/') || next === undefined || next === '/' || next === '?') return true
  }
  return false
}
