// POST/GET/OPTIONS /s/ (and /s): session recordings from posthog-js, bodies up to MAX_RECORDING_BODY_BYTES.
import { Elysia, type Context } from 'elysia'
import { readCappedBody, type BodyLimits } from '../http/body'
import { clientIp, preflightHeaders, queryOf } from '../http/cors'
import { documentedAnswer, documentedBody } from '../http/openapi'
import { CaptureOk } from '../capture/model'
import { RecordingBody } from './model'
import type { RecordingIngest } from './ingest'

const OK = JSON.stringify({ status: 1 })

export function recordingIngestRoutes(deps: { ingest: RecordingIngest; body: BodyLimits; trustProxy: boolean | number }) {
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
    await deps.ingest.ingest(
      {
        method: request.method,
        body,
        contentType: request.headers.get('content-type'),
        contentEncoding: request.headers.get('content-encoding'),
        query,
        ip: null,
        userAgent: request.headers.get('user-agent'),
        engage: false,
        receivedAt,
        seed: new Uint8Array(16),
      },
      client,
    )
    if (query.get('beacon') === '1') {
      set.status = 204
      return ''
    }
    return answer(set)
  }
  const detail = {
    tags: ['capture'],
    summary: 'Session recordings (posthog-js $snapshot events)',
    description:
      'Body: $snapshot events (an array or one) with $session_id, $window_id and $snapshot_data (rrweb events); JSON, gzip (by magic bytes or ?compression=gzip-js), lz64, base64 or form data=. Answers {"status": 1} once durable.',
    requestBody: documentedBody(RecordingBody, 'recording events'),
    responses: documentedAnswer(CaptureOk),
  }
  return new Elysia({ name: 'recording-ingest' })
    .post('/s', ({ request, set, server }) => handle(request, set, server?.requestIP(request)?.address), { parse: 'none', detail })
    .get('/s', ({ request, set, server }) => handle(request, set, server?.requestIP(request)?.address), { detail })
    .options('/s', ({ request, set }) => answer(set, preflightHeaders(request)))
}
