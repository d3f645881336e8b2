// GET / → /console/; every /console/... path answers the single page; /console/assets/* are the hashed bundle files.
// The app talks only to the public REST API (with the session cookie), like any other client.
import { Elysia } from 'elysia'
import { errors } from '../http/errors'
import { buildConsole, FAVICON, type Asset, type ConsoleBundle } from './bundle'

/** The page may load only what this server serves and talk only to it: no CDN, no other host. */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
}

/** Whether the client takes gzip (`Accept-Encoding: gzip`, not refused with q=0). */
export function acceptsGzip(header: string | null): boolean {
  if (!header) return false
  for (const part of header.slice(0, 1024).toLowerCase().split(',')) {
    const [coding, ...params] = part.trim().split(';')
    if (coding !== 'gzip' && coding !== '*') continue
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    return !q || Number(q.slice(2)) > 0
  }
  return false
}

/** The stored bytes, gzipped when the client takes it: compressed once at build, never per request. */
function encoded(request: Request, body: Uint8Array | string, gzip: Uint8Array | null, headers: Record<string, string>): Response {
  const zipped = gzip !== null && acceptsGzip(request.headers.get('accept-encoding'))
  const all: Record<string, string> = { ...SECURITY_HEADERS, ...headers, vary: 'Accept-Encoding' }
  if (zipped) all['content-encoding'] = 'gzip'
  return new Response(zipped ? gzip : body, { headers: all })
}

const ICON_HEADERS = (asset: Asset) => ({ 'content-type': asset.type, 'cache-control': 'public, max-age=86400' })

export function consoleRoutes(options: { build?: () => Promise<ConsoleBundle> } = {}) {
  const build = options.build ?? (() => buildConsole())
  let bundle: Promise<ConsoleBundle> | undefined
  // built once; a failed build is tried again at the next request rather than remembered
  const current = () => {
    bundle ??= build().catch((error) => {
      bundle = undefined
      throw error
    })
    return bundle
  }
  const page = async (request: Request) => {
    const { html, htmlGzip } = await current()
    return encoded(request, html, htmlGzip, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' })
  }
  const icon = ({ request }: { request: Request }) => encoded(request, FAVICON.body, FAVICON.gzip, ICON_HEADERS(FAVICON))
  const hide = { detail: { hide: true } }
  return new Elysia({ name: 'console' })
    .get('/', ({ redirect }) => redirect('/console/', 302), hide)
    .get('/favicon.ico', icon, hide)
    .get('/console/favicon.svg', icon, hide)
    .get('/console', ({ request }) => page(request), hide)
    .get(
      '/console/assets/:name',
      async ({ params, request }) => {
        const asset = (await current()).assets.get(params.name)
        if (!asset) throw errors.notFound()
        return encoded(request, asset.body, asset.gzip, { 'content-type': asset.type, 'cache-control': 'public, max-age=31536000, immutable' })
      },
      hide,
    )
    .get('/console/*', ({ request }) => page(request), hide)
}
