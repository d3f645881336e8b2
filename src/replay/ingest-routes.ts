// POST/GET/OPTIONS /s/ (and /s): session recordings from posthog-js, bodies up to MAX_RECORDING_BODY_BYTES.
import { Elysia, type Context } from 'elysia'
import { readCappedBody, type BodyLimits } from '../http/body'
import { clientIp, preflightHeaders, queryOf } from '../http/cors'
import { documentedAnswer, documentedBody } from '../http/openapi'
import { RecordingBody, RecordingOk } from './model'
import type { RecordingIngest } from './ingest'

const OK = JSON.stringify({ status: 1 })
/** PostHog's answer to a recording dropped past a budget: a 200, so that the client does not retry it. */
const QUOTA_LIMITED = JSON.stringify({ status: 1, quota_limited: ['recordings'] })

export function recordingIngestRoutes(deps: { ingest: RecordingIngest; body: BodyLimits; trustProxy: boolean | number }) {
  const answer = (set: Context['set'], extra: Record<string, string> = {}, body = OK) => {
    Object.assign(set.headers, extra)
    set.headers['content-type'] = 'application/json'
    return body
  }
  const handle = async (request: Request, set: Context['set'], address: string | undefined) => {
    const receivedAt = Date.now()
    const client = clientIp(request, address, deps.trustProxy)
    const body = await readCappedBody(request, deps.body, client)
    const query = queryOf(request)
    const result = await deps.ingest.ingest(
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
    return result.quotaLimited ? answer(set, {}, QUOTA_LIMITED) : answer(set)
  }
  const detail = {
    tags: ['capture'],
    summary: 'Session recordings (posthog-js $snapshot events)',
    description:
      'Body: $snapshot events (an array or one) with $session_id, $window_id and $snapshot_data (rrweb events); JSON, gzip (by magic bytes or ?compression=gzip-js), lz64, base64 or form data=. Answers {"status": 1} once durable; a session past RECORDING_MAX_SESSION_BYTES or a project past RECORDING_MAX_PROJECT_DAILY_BYTES today gets {"status": 1, "quota_limited": ["recordings"]} and the request is dropped (PostHog\'s answer to a quota-limited recording: the client does not retry).',
    requestBody: documentedBody(RecordingBody, 'recording events'),
    responses: documentedAnswer(RecordingOk),
  }
  return new Elysia({ name: 'recording-ingest' })
    .post('/s', ({ request, set, server }) => handle(request, set, server?.requestIP(request)?.address), { parse: 'none', detail })
    .get('/s', ({ request, set, server }) => handle(request, set, server?.requestIP(request)?.address), { detail })
    .options('/s', ({ request, set }) => answer(set, preflightHeaders(request)))
}
