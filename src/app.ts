// Builds the HTTP app from the capability plugins. main.ts serves it; tests call app.handle() in-process.
import { Elysia } from 'elysia'
import { apiDocsRoutes } from './http/api-docs'
import { corsHeaders } from './http/cors'
import { ApiError, errors, toErrorResponse } from './http/errors'
import { opsRoutes } from './ops/routes'
import { projectRoutes } from './projects/routes'
import { personalKeyRoutes } from './projects/personal-key-routes'
import { captureRoutes } from './capture/routes'
import { eventRoutes } from './events/routes'
import { definitionRoutes } from './definitions/routes'
import { personRoutes } from './people/routes'
import { flagRoutes } from './flags/routes'
import { decideRoutes } from './flags/decide/routes'
import { remoteConfigRoutes } from './remote-config/routes'
import type { Services } from './services'

const VERSION = '0.1.0'

const DOCUMENT_INFO = {
  title: 'phog: PostHog-compatible ingestion, flags and definitions',
  version: VERSION,
  description:
    'Capture and batch ingestion, /decide and /flags, and the private REST API (personal API key: Authorization: Bearer phx_…).',
}

export function createApp(services: Services) {
  const { metrics, log } = services
  const maxBodyBytes = services.config.MAX_BODY_BYTES
  const privateApi = {
    sql: services.db.sql,
    auth: services.auth,
    limiter: services.apiLimiter,
    trustProxy: services.config.TRUST_PROXY,
  }
  const app = new Elysia({ name: 'phog' })
    .onRequest(({ request, set }) => {
      set.headers['x-request-id'] = request.headers.get('x-request-id') || crypto.randomUUID()
      // Every route's bodies are capped here by their declared length; capture and decide also cap chunked ones.
      // With CORS headers, so that a browser client can read why.
      if (Number(request.headers.get('content-length') ?? 0) > maxBodyBytes) {
        Object.assign(set.headers, corsHeaders(request))
        throw errors.tooLarge()
      }
    })
    .onError({ as: 'global' }, ({ code, error, set, request, path }) => {
      const { status, body, headers } = toErrorResponse(code, error)
      // Deliberate 5xx answers (503 backpressure, store down) are counted in metrics; only surprises are logged.
      if (status >= 500 && !(error instanceof ApiError)) {
        log.error({ err: error, path, method: request.method, requestId: set.headers['x-request-id'] }, 'request failed')
      }
      set.status = status
      set.headers['content-type'] = 'application/json'
      for (const [k, v] of Object.entries(headers)) set.headers[k] = v
      return body
    })
    .onAfterResponse({ as: 'global' }, ({ request, route, set, path }) => {
      const status = typeof set.status === 'number' ? set.status : 200
      metrics.httpRequests.inc({ route: route || 'unmatched', method: request.method, status })
      if (log.isLevelEnabled('debug')) {
        log.debug({ method: request.method, path, status, requestId: set.headers['x-request-id'] }, 'request')
      }
    })
    .use(opsRoutes({ metrics, readiness: services.readiness }))
    .use(
      captureRoutes({
        capture: services.capture,
        metrics,
        maxBodyBytes: services.config.MAX_BODY_BYTES,
        trustProxy: services.config.TRUST_PROXY,
      }),
    )
    .use(
      projectRoutes({
        sql: services.db.sql,
        auth: services.auth,
        tokens: services.tokens,
        limiter: services.apiLimiter,
        trustProxy: services.config.TRUST_PROXY,
      }),
    )
    .use(
      eventRoutes({
        events: services.events,
        auth: services.auth,
        limiter: services.apiLimiter,
        trustProxy: services.config.TRUST_PROXY,
      }),
    )
    .use(remoteConfigRoutes({ tokens: services.tokens }))
    .use(personalKeyRoutes(privateApi))
    .use(definitionRoutes(privateApi))
    .use(personRoutes(privateApi))
    .use(decideRoutes({ decide: services.flags.decide, metrics, maxBodyBytes: services.config.MAX_BODY_BYTES }))
    .use(
      flagRoutes({
        flags: services.flags.service,
        auth: services.auth,
        tokens: services.tokens,
        limiter: services.apiLimiter,
        trustProxy: services.config.TRUST_PROXY,
      }),
    )
  // Last, so that the document lists every route registered above (read when first asked for).
  return app.use(apiDocsRoutes({ routes: () => app.routes as never, info: DOCUMENT_INFO }))
}

export type App = ReturnType<typeof createApp>
