// POST /decide/?v=1..4 and POST /flags/?v=2[&config=true] (also GET and OPTIONS, with CORS).
import { Elysia } from 'elysia'
import { preflightHeaders, queryOf } from '../../http/cors'
import { readCappedBody } from '../../http/body'
import { ApiError } from '../../http/errors'
import type { Metrics } from '../../ops/metrics'
import type { DecideService } from './service'
import { documentedAnswer, documentedBody } from '../../http/openapi'
import { DecideAnswer, DecideBody } from './model'
import { minimalDecide } from './response'

const OK = JSON.stringify({ status: 1 })

type Context = { request: Request; set: { headers: Record<string, string | number>; status?: number | string } }

export function decideRoutes(deps: { decide: DecideService; metrics: Metrics; maxBodyBytes: number }) {
  // The answer goes back as a string with its headers in `set`: Elysia then makes one Response (returning a
  // Response while other hooks set headers makes it copy the body through a stream).
  const reply = ({ request, set }: Context, body: string, status = 200, extra?: Record<string, string>): string => {
    const h = set.headers
    h['access-control-allow-origin'] = request.headers.get('origin') || '*'
    h['access-control-allow-credentials'] = 'true'
    h.vary = 'Origin'
    h['content-type'] = 'application/json'
    if (extra) Object.assign(h, extra)
    if (status !== 200) set.status = status
    return body
  }
  const answered = { true: deps.metrics.decideRequests.labels({ errors: 'true' }), false: deps.metrics.decideRequests.labels({ errors: 'false' }) }

  const evaluate = (endpoint: 'decide' | 'flags') => async (ctx: Context) => {
    const { request } = ctx
    try {
      const body = await readCappedBody(request, deps.maxBodyBytes)
      const answer = await deps.decide.decide(endpoint, {
        method: request.method,
        body,
        contentType: request.headers.get('content-type'),
        contentEncoding: request.headers.get('content-encoding'),
        query: queryOf(request),
      })
      answered[answer.errors ? 'true' : 'false'].inc()
      return reply(ctx, answer.body)
    } catch (error) {
      // Errors carry CORS headers too, so that a browser client can read them.
      if (error instanceof ApiError) return reply(ctx, JSON.stringify(error.toBody()), error.status, error.headers)
      throw error
    }
  }
  const minimal = (ctx: Context) => reply(ctx, JSON.stringify(minimalDecide()))
  const preflight = ({ request }: { request: Request }) =>
    new Response(OK, { headers: { ...preflightHeaders(request), 'content-type': 'application/json' } })

  return new Elysia({ name: 'decide' })
    .post('/decide', evaluate('decide') as never, {
      parse: 'none',
      detail: {
        tags: ['flags'],
        summary: 'Feature flags of a user (/decide/?v=1..4)',
        description:
          'Body: {api_key|token, distinct_id, groups, person_properties, group_properties, flag_keys_to_evaluate, $anon_distinct_id}; JSON, form data=, base64, gzip or lz64. v=1: enabled keys; v=2: enabled values; v=3: all values and payloads; v=4: the flags detail map.',
        requestBody: documentedBody(DecideBody, 'who to evaluate flags for'),
        responses: documentedAnswer(DecideAnswer),
      },
    })
    .get('/decide', minimal as never, { detail: { tags: ['flags'], summary: 'Minimal /decide answer (no evaluation)', responses: documentedAnswer(DecideAnswer) } })
    .options('/decide', preflight as never)
    .post('/flags', evaluate('flags') as never, {
      parse: 'none',
      detail: {
        tags: ['flags'],
        summary: 'Feature flags of a user (/flags/?v=2[&config=true]), as posthog-node 5 and current posthog-js call',
        requestBody: documentedBody(DecideBody, 'who to evaluate flags for'),
        responses: documentedAnswer(DecideAnswer),
      },
    })
    .get('/flags', evaluate('flags') as never, { detail: { tags: ['flags'], summary: '/flags with the body in ?data=', responses: documentedAnswer(DecideAnswer) } })
    .options('/flags', preflight as never)
}
