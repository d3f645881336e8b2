// Which methods a path is served with, from the app's own route table: a known path called with another
// method answers 405 with an Allow header (not 404, which says the path does not exist).
export interface RouteEntry {
  method: string
  path: string
}

interface Matcher {
  pattern: RegExp
  method: string
}

function compile(routes: readonly RouteEntry[]): Matcher[] {
  return routes
    // catch-alls (the private API's CORS preflight on /api/*) say nothing about which paths exist
    .filter((r) => r.method !== 'ALL' && !r.path.includes('*'))
    .map((r) => {
      const body = r.path
        .replace(/\/+$/, '')
        .split('/')
        .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')
      return { pattern: new RegExp(`^${body}/?$`), method: r.method }
    })
}

export function allowedMethods(routes: () => readonly RouteEntry[]): (pathname: string) => string[] {
  let matchers: Matcher[] | null = null
  return (pathname) => {
    matchers ??= compile(routes())
    const methods = new Set<string>()
    for (const m of matchers) if (m.pattern.test(pathname)) methods.add(m.method)
    if (methods.has('GET')) methods.add('HEAD')
    return [...methods].sort()
  }
}
