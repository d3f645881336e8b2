// POST/GET/OPTIONS /capture/, /batch/, /e/, /i/v0/e/, /track/, /engage/ (/s/ recordings: src/replay/ingest-routes.ts).
import { Elysia, type AnyElysia, type Context } from 'elysia'
import { clientIp, preflightHeaders, queryOf } from '../http/cors'
import { readCappedBody, type BodyLimits } from '../http/body'
import type { Metrics } from '../ops/metrics'
import { documentedAnswer, documentedBody } from '../http/openapi'
import { CaptureBody, CaptureOk } from './model'
import type { CaptureService } from './service'

export const CAPTURE_PATHS = ['/capture', '/batch', '/e', '/i/v0/e', '/track', '/engage'] as const

const OK = JSON.stringify({ status: 1 })

/** `/batch/?x=1` → `batch`, `/i/v0/e` → `i/v0/e`: the metrics label of a capture path. */
function endpointOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2) + 1
  let end = url.indexOf('?', start)
  if (end < 0) end = url.length
  if (url[end - 1] === '/') end--
  return url.slice(start, end)
}

export function captureRoutes(deps: { capture: CaptureService; metrics: Metrics; body: BodyLimits; trustProxy: boolean | number }) {
  // Handlers answer with a string and set headers through `set` (CORS among them, set by the app for every
  // public endpoint): a returned Response would be copied through a stream by Elysia on every request.
  const answer = (set: Context['set'], extra: Record<string, string> = {}) => {
    Object.assign(set.headers, extra)
    set.headers['content-type'] = 'application/json'
    return OK
  }
  const handle = async (request: Request, set: Context['set'], address: string | undefined) => {
    const receivedAt = Date.now()
    const client = clientIp(request, address, deps.trustProxy)
    const body = await readCappedBody(request, deps.body, client)
    const query = queryOf(request)
    await deps.capture.capture({
      method: request.method,
      body,
      contentType: request.headers.get('content-type'),
      contentEncoding: request.headers.get('content-encoding'),
      query,
      // ?ip=0 (older posthog-js): the site asked not to record the visitor's address
      ip: query.get('ip') === '0' ? null : client,
      userAgent: request.headers.get('user-agent'),
      engage: request.url.startsWith('/engage', request.url.indexOf('/', 8)),
      receivedAt,
      seed: crypto.getRandomValues(new Uint8Array(16)),
    }, endpointOf(request.url), client)
    // posthog-js sends navigator.sendBeacon requests with ?beacon=1 and ignores the body.
    if (query.get('beacon') === '1') {
      set.status = 204
      return ''
    }
    return answer(set)
  }

  const detail = (path: string) => ({
    tags: ['capture'],
    summary: `Capture events (${path}/)`,
    description:
      'Body: a single event, an array of events, or {api_key, batch: [...]}; JSON, gzip, lz64, base64 or form data=. Answers {"status": 1}.',
    requestBody: documentedBody(CaptureBody, 'one event, an array of events, or a batch'),
    responses: documentedAnswer(CaptureOk),
  })
  let app: AnyElysia = new Elysia({ name: 'capture' })
  for (const path of CAPTURE_PATHS) {
    app = app
      .post(path, ({ request, set, server }) => handle(request, set, server?.requestIP(request)?.address), { parse: 'none', detail: detail(path) })
      .get(path, ({ request, set, server }) => handle(request, set, server?.requestIP(request)?.address), { detail: detail(path) })
      .options(path, ({ request, set }) => answer(set, preflightHeaders(request)))
  }
  return app
}
