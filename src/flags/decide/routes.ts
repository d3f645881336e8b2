// POST /decide/?v=1..4 and POST /flags/?v=2[&config=true] (also GET and OPTIONS, with CORS).
import { Elysia, type Context } from 'elysia'
import { clientIp, preflightHeaders, queryOf } from '../../http/cors'
import { readCappedBody, type BodyLimits } from '../../http/body'
import type { Metrics } from '../../ops/metrics'
import type { DecideService } from './service'
import { documentedAnswer, documentedBody } from '../../http/openapi'
import { DecideAnswer, DecideBody } from './model'
import { minimalDecide } from './response'

const OK = JSON.stringify({ status: 1 })

export function decideRoutes(deps: { decide: DecideService; metrics: Metrics; body: BodyLimits; trustProxy?: boolean | number }) {
  // The answer goes back as a string with its headers in `set` (CORS among them, set by the app for every public
  // endpoint; errors take the app's one error path): Elysia then makes one Response.
  const reply = (set: Context['set'], body: string) => {
    set.headers['content-type'] = 'application/json'
    return body
  }
  const answered = { true: deps.metrics.decideAnswers.of('true', { errors: 'true' }), false: deps.metrics.decideAnswers.of('false', { errors: 'false' }) }

  const evaluate = async (endpoint: 'decide' | 'flags', request: Request, set: Context['set'], peer?: string) => {
    const client = clientIp(request, peer, deps.trustProxy ?? false)
    const body = await readCappedBody(request, deps.body, client)
    const answer = await deps.decide.decide(endpoint, {
      method: request.method,
      body,
      contentType: request.headers.get('content-type'),
      contentEncoding: request.headers.get('content-encoding'),
      query: queryOf(request),
    }, client)
    answered[answer.errors ? 'true' : 'false'].inc()
    return reply(set, answer.body)
  }
  const preflight = (request: Request, set: Context['set']) => {
    Object.assign(set.headers, preflightHeaders(request))
    return reply(set, OK)
  }

  return new Elysia({ name: 'decide' })
    .post('/decide', ({ request, set, server }) => evaluate('decide', request, set, server?.requestIP(request)?.address), {
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
    .get('/decide', ({ set }) => reply(set, JSON.stringify(minimalDecide())), { detail: { tags: ['flags'], summary: 'Minimal /decide answer (no evaluation)', responses: documentedAnswer(DecideAnswer) } })
    .options('/decide', ({ request, set }) => preflight(request, set))
    .post('/flags', ({ request, set, server }) => evaluate('flags', request, set, server?.requestIP(request)?.address), {
      parse: 'none',
      detail: {
        tags: ['flags'],
        summary: 'Feature flags of a user (/flags/?v=2[&config=true]), as posthog-node 5 and current posthog-js call',
        requestBody: documentedBody(DecideBody, 'who to evaluate flags for'),
        responses: documentedAnswer(DecideAnswer),
      },
    })
    .get('/flags', ({ request, set, server }) => evaluate('flags', request, set, server?.requestIP(request)?.address), { detail: { tags: ['flags'], summary: '/flags with the body in ?data=', responses: documentedAnswer(DecideAnswer) } })
    .options('/flags', ({ request, set }) => preflight(request, set))
}
