// Builds the HTTP app from the capability plugins. main.ts serves it; tests call app.handle() in-process.
import { Elysia } from 'elysia'
import { apiDocsRoutes } from './http/api-docs'
import { apiPreflightHeaders, clientIp, corsHeaders, isPublicEndpoint, privateApiCorsHeaders } from './http/cors'
import { refuseTooLarge } from './http/body'
import { bindRequestSignal } from './db/cancel'
import { allowedMethods } from './http/methods'
import { ApiError, errors, toErrorResponse } from './http/errors'
import { opsRoutes } from './ops/routes'
import { projectRoutes } from './projects/routes'
import { personalKeyRoutes } from './projects/personal-key-routes'
import { captureRoutes } from './capture/routes'
import { eventRoutes } from './events/routes'
import { definitionRoutes } from './definitions/routes'
import { personRoutes } from './people/routes'
import { groupTypeRoutes } from './people/group-types-routes'
import { bumpFlagVersion } from './flags/repository'
import { flagRoutes } from './flags/routes'
import { cohortRoutes } from './cohorts/routes'
import { queryRoutes } from './query/routes'
import { decideRoutes } from './flags/decide/routes'
import { remoteConfigRoutes } from './remote-config/routes'
import type { Services } from './services'
import { userRoutes } from './users/routes'
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE } from './users/rules'
import { isSignInPath } from './users/session-cookie'
import { consoleRoutes } from './console/routes'
import { flagHistoryRoutes } from './flag-history/routes'
import { throttled } from './log'

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
  const bodyLimits = { maxBytes: maxBodyBytes, timeoutMs: services.config.BODY_TIMEOUT_MS }
  const logRequests = services.config.LOG_REQUESTS && log.isLevelEnabled('info')
  const privateApi = {
    sql: services.db.sql,
    auth: services.auth,
    limiter: services.apiLimiter,
    trustProxy: services.config.TRUST_PROXY,
  }
  const started = new WeakMap<Request, number>()
  const logServerError = throttled(1000)
  const durationMs = (request: Request) => Math.round((performance.now() - (started.get(request) ?? performance.now())) * 10) / 10
  // standardHostname: false — find the path after "http://", not at index 11: a Host shorter than 4 characters
  // (`Host: api`) made every route answer 404, and a crafted path could slip past a proxy rule on /api/.
  const base = new Elysia({ name: 'phog', handler: { standardHostname: false } })
  const methodsOf = allowedMethods(() => base.routes)
  const app = base
    .onRequest(async ({ request, set, server }) => {
      started.set(request, performance.now())
      set.headers['x-request-id'] = request.headers.get('x-request-id') || crypto.randomUUID()
      const isPrivateApi = request.url.startsWith('/api/', request.url.indexOf('/', 8))
      // its reads are cancelled in Postgres if the client leaves (db/cancel.ts)
      if (isPrivateApi) bindRequestSignal(request.signal)
      // The one place CORS headers are set, for answers and errors alike: the public endpoints answer any page
      // (posthog-js runs on the customer's site), the private API answers browsers on other origins (an admin
      // tool with a Bearer key).
      if (isPrivateApi) {
        if (request.headers.has('origin')) Object.assign(set.headers, privateApiCorsHeaders(request))
      } else if (isPublicEndpoint(request.url)) Object.assign(set.headers, corsHeaders(request))
      // ... and checks the key before reading a body: an anonymous 70 MB chunked body is not parsed first
      // (a personal key or a console session with its CSRF header; sign-in and sign-out carry neither)
      if (isPrivateApi && request.body !== null && request.method !== 'GET' && request.method !== 'OPTIONS' && !isSignInPath(request.url)) {
        const address = clientIp(request, server?.requestIP(request)?.address, services.auth.trustProxy)
        await services.auth.authenticateRequest(request, address)
      }
      // Every route's bodies are capped here by their declared length; capture and decide also cap chunked ones.
      // With CORS headers, so that a browser client can read why.
      if (Number(request.headers.get('content-length') ?? 0) > maxBodyBytes) {
        Object.assign(set.headers, corsHeaders(request))
        await refuseTooLarge(request)
      }
    })
    .onError({ as: 'global' }, ({ code, error, set, request, route, path }) => {
      // a known path with a method it does not serve: 405 with Allow; an unknown path stays 404
      const allow = code === 'NOT_FOUND' ? methodsOf(path) : []
      if (allow.length > 0) set.headers.allow = allow.join(', ')
      const { status, body, headers } = toErrorResponse(code, allow.length > 0 ? errors.methodNotAllowed(request.method) : error)
      if (status >= 500) {
        // every 5xx with its reason; a deliberate one (503 backpressure, a store down) at most once a second per cause
        const line = { requestId: set.headers['x-request-id'], method: request.method, route: route || 'unmatched', status, durationMs: durationMs(request), code: body.code }
        if (error instanceof ApiError) logServerError(`${line.route}:${body.code}`, (suppressed) => log.error({ ...line, suppressed }, `request answered ${status}: ${body.detail}`))
        else log.error({ ...line, err: error }, `request failed: ${(error as Error)?.message ?? String(error)}`)
      }
      set.status = status
      set.headers['content-type'] = 'application/json'
      for (const [k, v] of Object.entries(headers)) set.headers[k] = v
      return body
    })
    .onAfterResponse({ as: 'global' }, ({ request, route, set, path }) => {
      const status = typeof set.status === 'number' ? set.status : 200
      metrics.countHttpRequest(route || 'unmatched', request.method, status)
      // the access line: at info with LOG_REQUESTS=true, and always at debug
      if (logRequests || log.isLevelEnabled('debug')) {
        const line = { method: request.method, route: route || 'unmatched', path, status, durationMs: durationMs(request), requestId: set.headers['x-request-id'] }
        if (logRequests) log.info(line, 'request')
        else log.debug(line, 'request')
      }
    })
    .options('/api/*', ({ request, set }) => {
      Object.assign(set.headers, apiPreflightHeaders(request))
      set.status = 204
      return ''
    }, { detail: { hide: true } })
    .use(opsRoutes({ metrics, readiness: services.readiness }))
    .use(
      captureRoutes({
        capture: services.capture,
        metrics,
        body: bodyLimits,
        trustProxy: services.auth.trustProxy,
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
        personIds: (teamId, distinctIds) => services.query.personIds(teamId, distinctIds),
      }),
    )
    .use(remoteConfigRoutes({ tokens: services.tokens }))
    .use(personalKeyRoutes(privateApi))
    .use(definitionRoutes(privateApi))
    .use(personRoutes({ ...privateApi, erasure: services.erasure, metrics }))
    .use(
      groupTypeRoutes({
        ...privateApi,
        changedIn: (tx, teamId) => bumpFlagVersion(tx, teamId, services.db.supportsNotify),
        onChanged: (teamId) => services.flags.cache.refresh(teamId),
      }),
    )
    .use(decideRoutes({ decide: services.flags.decide, metrics, body: bodyLimits, trustProxy: services.auth.trustProxy }))
    .use(
      flagRoutes({
        flags: services.flags.service,
        auth: services.auth,
        tokens: services.tokens,
        limiter: services.apiLimiter,
        trustProxy: services.config.TRUST_PROXY,
      }),
    )
    .use(cohortRoutes({ cohorts: services.cohorts, auth: services.auth, limiter: services.apiLimiter, trustProxy: services.config.TRUST_PROXY, metrics }))
    // console sign-in and the console app itself
    .use(userRoutes({ users: services.users, auth: services.auth, limiter: services.apiLimiter, trustProxy: services.config.TRUST_PROXY }))
    .use(flagHistoryRoutes(privateApi))
    .use(consoleRoutes())
    .use(queryRoutes({ query: services.query, auth: services.auth, limiter: services.apiLimiter }))
  // The document is built when first asked for, from every route registered by then.
  return app.use(apiDocsRoutes(DOCUMENT_INFO, { cookie: SESSION_COOKIE, csrfCookie: CSRF_COOKIE, csrfHeader: CSRF_HEADER }))
}

export type App = ReturnType<typeof createApp>
