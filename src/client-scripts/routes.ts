// GET /static/<name>.js (posthog-js asks `?v=<its version>`) and /static/<version>/<name>.js (posthog-js 1.4xx's
// strict_script_versioning, which falls back to the first form on a 404): the lazily loaded posthog-js scripts.
// CORS-open like every public endpoint (set by the app for /static/), cached a week by browsers with an ETag,
// gzip or brotli when the client accepts them.
import { Elysia, t } from 'elysia'
import { errors } from '../http/errors'
import type { ClientScripts, Script } from './scripts'

const CACHE_CONTROL = 'public, max-age=604800'

/** Longest Accept-Encoding read (a browser's is a few dozen characters). */
const MAX_ACCEPT_ENCODING_CHARS = 1024

/** The codings the client accepts: named ones with a q-value above 0 (`br;q=0` refuses brotli; `*` is not read). */
export function acceptedEncodings(header: string | null): Set<string> {
  const accepted = new Set<string>()
  for (const part of (header ?? '').slice(0, MAX_ACCEPT_ENCODING_CHARS).split(',')) {
    const [name, ...params] = part.split(';').map((p) => p.trim().toLowerCase())
    const q = params.find((p) => p.startsWith('q='))
    if (name && (q === undefined || Number(q.slice(2)) > 0)) accepted.add(name)
  }
  return accepted
}

function encodingFor(request: Request): 'br' | 'gzip' | null {
  const accepted = acceptedEncodings(request.headers.get('accept-encoding'))
  if (accepted.has('br')) return 'br'
  if (accepted.has('gzip')) return 'gzip'
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
  // `*` matches any current representation (RFC 9110 13.1.2)
  if (conditional !== null && conditional.split(',').some((tag) => tag.trim() === '*' || tag.trim().replace(/^W\//, '') === script.etag)) {
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
  const answers = { 200: { description: 'the script', content: { 'application/javascript': { schema: { type: 'string' } } } }, 304: { description: 'not modified (ETag)' } } as never
  // One parameter name for the first segment in both routes (the router wants it so): a script's name, or in the
  // longer form the posthog-js version, only the installed one being here (posthog-js then asks the first form).
  return new Elysia({ name: 'client-scripts' })
    .get('/static/:name', ({ params, request }) => serve(request, params.name), {
      params: t.Object({ name: t.String({ description: 'a script of the posthog-js package, e.g. lazy-recorder.js' }) }),
      detail: {
        tags: ['remote config'],
        summary: 'A script posthog-js loads lazily (lazy-recorder.js, recorder.js, surveys.js, exception-autocapture.js, web-vitals.js, …), from the installed posthog-js',
        responses: answers,
      },
    })
    .get(
      '/static/:name/:script',
      ({ params, request }) => {
        if (params.name !== deps.scripts.version) throw errors.notFound('No such script version.')
        return serve(request, params.script)
      },
      {
        params: t.Object({
          name: t.String({ description: 'the posthog-js version (strict_script_versioning): only the installed one; 404 otherwise' }),
          script: t.String({ description: 'the script, e.g. lazy-recorder.js' }),
        }),
        detail: { tags: ['remote config'], summary: 'The same script by posthog-js version', responses: answers },
      },
    )
}
