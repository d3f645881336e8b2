// GET / → /console/; every /console/... path answers the single page; /console/assets/* are the hashed bundle files.
// The app talks only to the public REST API (with the session cookie), like any other client.
import { Elysia } from 'elysia'
import { errors } from '../http/errors'
import { buildConsole, type ConsoleBundle } from './bundle'

/** The page may load only what this server serves and talk only to it: no CDN, no other host. */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
}

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
  const page = async (set: { headers: Record<string, unknown> }) => {
    const { html } = await current()
    Object.assign(set.headers, SECURITY_HEADERS, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' })
    return html
  }
  const hide = { detail: { hide: true } }
  return new Elysia({ name: 'console' })
    .get('/', ({ redirect }) => redirect('/console/', 302), hide)
    .get('/console', ({ set }) => page(set), hide)
    .get(
      '/console/assets/:name',
      async ({ params, set }) => {
        const asset = (await current()).assets.get(params.name)
        if (!asset) throw errors.notFound()
        Object.assign(set.headers, SECURITY_HEADERS, { 'content-type': asset.type, 'cache-control': 'public, max-age=31536000, immutable' })
        return new Response(asset.body)
      },
      hide,
    )
    .get('/console/*', ({ set }) => page(set), hide)
}
