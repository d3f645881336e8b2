// GET /static/<name>.js (posthog-js asks `?v=<its version>`) and /static/<version>/<name>.js (posthog-js 1.4xx's
// strict_script_versioning, which falls back to the first form on a 404): the lazily loaded posthog-js scripts.
// CORS-open like every public endpoint (set by the app for /static/), cached a week by browsers with an ETag,
// gzip or brotli when the client accepts them.
import { Elysia } from 'elysia'
import { errors } from '../http/errors'
import type { ClientScripts, Script } from './scripts'

const CACHE_CONTROL = 'public, max-age=604800'

function encodingFor(request: Request): 'br' | 'gzip' | null {
  const accepted = request.headers.get('accept-encoding') ?? ''
  if (/\bbr\b/.test(accepted)) return 'br'
  if (/\bgzip\b/.test(accepted)) return 'gzip'
  return null
}

function answer(request: Request, script: Script): Response {
  const headers: Record<string, string> = {
    'content-type': 'application/javascript; charset=utf-8',
    'cache-control': CACHE_CONTROL,
    etag: script.etag,
    vary: 'Accept-Encoding, Origin',
  }
  const conditional = request.headers.get('if-none-match')
  if (conditional !== null && conditional.split(',').some((tag) => tag.trim().replace(/^W\//, '') === script.etag)) {
    return new Response(null, { status: 304, headers })
  }
  const encoding = encodingFor(request)
  if (encoding !== null) headers['content-encoding'] = encoding
  return new Response(encoding === 'br' ? script.br : encoding === 'gzip' ? script.gzip : script.identity, { headers })
}

export function clientScriptRoutes(deps: { scripts: ClientScripts }) {
  const serve = async (request: Request, name: string) => {
    const script = await deps.scripts.get(name)
    if (script === null) throw errors.notFound('No such script.')
    return answer(request, script)
  }
  const detail = (summary: string) => ({
    tags: ['remote config'],
    summary,
    responses: { 200: { description: 'the script', content: { 'application/javascript': { schema: { type: 'string' } } } }, 304: { description: 'not modified (ETag)' } } as never,
  })
  return new Elysia({ name: 'client-scripts' }).get(
    '/static/*',
    ({ params, request }) => {
      // <name>.js, or <version>/<name>.js with only the installed version here (posthog-js then asks the first form)
      const path = params['*']
      if (path.length > 200) throw errors.notFound('No such script.')
      const slash = path.indexOf('/')
      if (slash === -1) return serve(request, path)
      if (path.slice(0, slash) !== deps.scripts.version) throw errors.notFound('No such script version.')
      return serve(request, path.slice(slash + 1))
    },
    {
      detail: {
        tags: ['remote config'],
        summary: 'A script posthog-js loads lazily (lazy-recorder.js, recorder.js, surveys.js, exception-autocapture.js, web-vitals.js, …), from the installed posthog-js; also /static/<version>/<name>.js for that version',
        responses: { 200: { description: 'the script', content: { 'application/javascript': { schema: { type: 'string' } } } }, 304: { description: 'not modified (ETag)' } } as never,
      },
    },
  )
}
