// POST/GET/OPTIONS /capture/, /batch/, /e/, /i/v0/e/, /track/, /engage/ (and /s/ recordings, dropped).
import { Elysia, type AnyElysia } from 'elysia'
import { clientIp, corsHeaders, preflightHeaders, queryOf } from '../http/cors'
import { readCappedBody } from '../http/body'
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

export function captureRoutes(deps: { capture: CaptureService; metrics: Metrics; maxBodyBytes: number; trustProxy: boolean }) {
  // Handlers answer with a string and set headers through `set`: a returned Response would be copied
  // through a stream by Elysia on every request, because a global hook sets x-request-id.
  type Context = { request: Request; set: { status?: number | string; headers: Record<string, string | number> } }
  const answer = (set: Context['set'], request: Request, extra: Record<string, string> = {}) => {
    Object.assign(set.headers, corsHeaders(request), extra)
    set.headers['content-type'] = 'application/json'
    return OK
  }
  const handle = async ({ request, set, server }: Context & { server: { requestIP(r: Request): { address: string } | null } | null }) => {
    const receivedAt = Date.now()
    Object.assign(set.headers, corsHeaders(request))
    const body = await readCappedBody(request, deps.maxBodyBytes)
    const query = queryOf(request)
    await deps.capture.capture({
      method: request.method,
      body,
      contentType: request.headers.get('content-type'),
      contentEncoding: request.headers.get('content-encoding'),
      query,
      // ?ip=0 (older posthog-js): the site asked not to record the visitor's address
      ip: query.get('ip') === '0' ? null : clientIp(request, server?.requestIP(request)?.address, deps.trustProxy),
      userAgent: request.headers.get('user-agent'),
      engage: request.url.startsWith('/engage', request.url.indexOf('/', 8)),
      receivedAt,
      seed: crypto.getRandomValues(new Uint8Array(16)),
    }, endpointOf(request.url))
    // posthog-js sends navigator.sendBeacon requests with ?beacon=1 and ignores the body.
    if (query.get('beacon') === '1') {
      set.status = 204
      return ''
    }
    return answer(set, request)
  }
  const preflight = ({ request, set }: Context) => answer(set, request, preflightHeaders(request))
  const recording = ({ request, set }: Context) => {
    deps.metrics.recordingsDropped.inc()
    return answer(set, request)
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
      .post(path, handle as never, { parse: 'none', detail: detail(path) })
      .get(path, handle as never, { detail: detail(path) })
      .options(path, preflight as never)
  }
  for (const path of ['/s']) {
    app = app
      .post(path, recording as never, {
        parse: 'none',
        detail: {
          tags: ['capture'],
          summary: 'Session recordings: answered and dropped',
          requestBody: documentedBody(CaptureBody, 'recording events'),
          responses: documentedAnswer(CaptureOk),
        },
      })
      .get(path, recording as never, { detail: { tags: ['capture'], summary: 'Session recordings: answered and dropped', responses: documentedAnswer(CaptureOk) } })
      .options(path, preflight as never)
  }
  return app
}
