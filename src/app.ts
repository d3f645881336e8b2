// Builds the HTTP app from the capability plugins. main.ts serves it; tests call app.handle() in-process.
import { Elysia } from 'elysia'
import { apiDocsRoutes } from './http/api-docs'
import { apiPreflightHeaders, clientIp, isPublicEndpoint, privateApiCorsHeaders, setCorsHeaders } from './http/cors'
import { refuseTooLarge, type BodyLimits } from './http/body'
import { InflightBodies } from './http/inflight'
import { cappedBodyParser } from './http/parse'
import { bindRequestSignal } from './db/cancel'
import { allowedMethods } from './http/methods'
import { ApiError, errors, toErrorResponse } from './http/errors'
import { opsRoutes } from './ops/routes'
import { projectRoutes } from './projects/routes'
import { personalKeyRoutes } from './projects/personal-key-routes'
import { captureRoutes } from './capture/routes'
import { eventRoutes } from './events/routes'
import { eventValueRoutes } from './events/value-routes'
import { definitionRoutes } from './definitions/routes'
import { personRoutes } from './people/routes'
import { groupTypeRoutes } from './people/group-types-routes'
import { bumpFlagVersion } from './flags/repository'
import { flagRoutes } from './flags/routes'
import { experimentRoutes } from './experiments/routes'
import { errorTrackingRoutes } from './error-tracking/routes'
import { ErrorTrackingService } from './error-tracking/service'
import { cohortRoutes } from './cohorts/routes'
import { actionRoutes } from './actions/routes'
import { recordingIngestRoutes } from './replay/ingest-routes'
import { recordingRoutes } from './replay/routes'
import { memberRoutes } from './members/routes'
import { backupRoutes } from './backup/routes'
import { queryRoutes } from './insights/routes'
import { insightRoutes } from './dashboards/insight-routes'
import { dashboardRoutes } from './dashboards/dashboard-routes'
import { decideRoutes } from './flags/decide/routes'
import { remoteConfigRoutes } from './remote-config/routes'
import { publicSurveyRoutes, surveyRoutes } from './surveys/routes'
import type { Services } from './services'
import { clientScriptRoutes } from './client-scripts/routes'
import { ClientScripts } from './client-scripts/scripts'
import { currentUserRoutes, signInRoutes } from './users/routes'
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE } from './users/rules'
import { consoleRoutes } from './console/routes'
import { flagHistoryRoutes } from './flag-history/routes'
import { throttled } from './log'

const VERSION = '0.1.0'

/** Where a request's context keeps when it started (performance.now()). */
const STARTED = Symbol('started')
type Timed = { [STARTED]?: number }

interface PrivateApiDeps {
  sql: Services['db']['sql']
  auth: Services['auth']
  limiter: Services['apiLimiter']
  trustProxy: boolean
}

const DOCUMENT_INFO = {
  title: 'phog: PostHog-compatible ingestion, flags and definitions',
  version: VERSION,
  description:
    'Capture and batch ingestion, /decide and /flags, and the private REST API (personal API key: Authorization: Bearer phx_…).',
}

/** A client's X-Request-Id is kept only when it is short and plain; anything else is replaced (it goes into every log line). */
const PLAIN_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

export function requestIdOf(request: Request): string {
  const given = request.headers.get('x-request-id')
  return given !== null && PLAIN_REQUEST_ID.test(given) ? given : crypto.randomUUID()
}

/** `/s`, `/s/`, `/s?…`: session recordings, whose bodies may be larger than capture's. */
function isRecordingPath(url: string): boolean {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (!url.startsWith('/s', start)) return false
  const next = url[start + 2]
  return next === undefined || next === '/' || next === '?'
}

export function createApp(services: Services) {
  const { metrics, log } = services
  const maxBodyBytes = services.config.MAX_BODY_BYTES
  const maxRecordingBytes = services.config.MAX_RECORDING_BODY_BYTES
  const inflight = new InflightBodies(services.config.MAX_INFLIGHT_BODY_BYTES, {
    onRefused: (scope) => metrics.bodyBudgetRefusals.labels({ scope }).inc(),
    onDeclaredFull: () => metrics.bodiesStreamedDeclaredFull.inc(),
  })
  // read at scrape time: setting a gauge twice a request cost /decide more than the budget itself
  metrics.beforeScrape.push(() => metrics.inflightBodyBytes.set(inflight.reservedBytes))
  const bodyLimits: BodyLimits = { maxBytes: maxBodyBytes, timeoutMs: services.config.BODY_TIMEOUT_MS, inflight }
  const logRequests = services.config.LOG_REQUESTS && log.isLevelEnabled('info')
  const privateApi: PrivateApiDeps = {
    sql: services.db.sql,
    auth: services.auth,
    limiter: services.apiLimiter,
    trustProxy: services.config.TRUST_PROXY,
  }
  const logServerError = throttled(1000)
  // the request's start is kept on its `set` (one object a request, handed to every hook): a WeakMap entry a
  // request cost the collector more than the lookup saved
  const durationMs = (set: object) => Math.round((performance.now() - ((set as Timed)[STARTED] ?? performance.now())) * 10) / 10
  // http_requests_total and the access line, counted where the answer is decided (its handler, or the error
  // handler) rather than after it is sent: an after-response hook costs every request a deferred task
  const answered = (request: Request, route: string, path: string, status: number, set: { headers: Record<string, unknown> }) => {
    metrics.countHttpRequest(route || 'unmatched', request.method, status)
    if (logRequests || log.isLevelEnabled('debug')) {
      const line = { method: request.method, route: route || 'unmatched', path, status, durationMs: durationMs(set), requestId: set.headers['x-request-id'] }
      if (logRequests) log.info(line, 'request')
      else log.debug(line, 'request')
    }
  }
  // standardHostname: false — find the path after "http://", not at index 11: a Host shorter than 4 characters
  // (`Host: api`) made every route answer 404, and a crafted path could slip past a proxy rule on /api/.
  const base = new Elysia({ name: 'phog', handler: { standardHostname: false } })
  const methodsOf = allowedMethods(() => base.routes)
  const app = base
    // Synchronous on purpose (Elysia then calls every route without an extra promise): what needs a promise happens
    // where it applies — the private API's key check in its parse hook, a body's caps where it is read, the
    // lingering 413 in the error handler.
    .onRequest(function everyRequest({ request, set }) {
      ;(set as Timed)[STARTED] = performance.now()
      set.headers['x-request-id'] = requestIdOf(request)
      const url = request.url // a new string at each read
      const isPrivateApi = url.startsWith('/api/', url.indexOf('/', 8))
      // its reads are cancelled in Postgres if the client leaves (db/cancel.ts)
      if (isPrivateApi) bindRequestSignal(request.signal)
      // The one place CORS headers are set, for answers and errors alike: the public endpoints answer any page
      // (posthog-js runs on the customer's site), the private API answers browsers on other origins (an admin
      // tool with a Bearer key).
      if (isPrivateApi && !isPublicEndpoint(url)) {
        if (request.headers.has('origin')) Object.assign(set.headers, privateApiCorsHeaders(request))
      } else if (isPublicEndpoint(url)) setCorsHeaders(set.headers as Record<string, string | number>, request)
      // A body declared larger than the cap is refused before any route sees it (the error handler reads and drops
      // what the client still sends, then answers 413 with the CORS headers above); chunked ones are cut where read.
      // (/s/, session recordings, has its own cap: MAX_RECORDING_BODY_BYTES)
      if (Number(request.headers.get('content-length') ?? 0) > (isRecordingPath(url) ? maxRecordingBytes : maxBodyBytes)) throw errors.tooLarge()
    })
    .onError({ as: 'global' }, async ({ code, error, set, request, route, path }) => {
      // a refused body still arriving is read and dropped (bounded) first, so the client sees the 413, not a reset
      if (error instanceof ApiError && error.status === 413 && request.body !== null && !request.bodyUsed && !request.body.locked) {
        await refuseTooLarge(request).catch(() => undefined)
      }
      // a client that left before its body arrived: nobody reads the answer; counted as 499, logged at debug
      if (request.signal.aborted && !(error instanceof ApiError && error.status !== 499)) {
        log.debug({ requestId: set.headers['x-request-id'], method: request.method, route: route || 'unmatched', durationMs: durationMs(set) }, 'client closed the connection')
        error = errors.clientClosed()
      }
      // a known path with a method it does not serve: 405 with Allow; an unknown path stays 404
      const allow = code === 'NOT_FOUND' ? methodsOf(path) : []
      if (allow.length > 0) set.headers.allow = allow.join(', ')
      const { status, body, headers } = toErrorResponse(code, allow.length > 0 ? errors.methodNotAllowed(request.method) : error)
      if (status >= 500) {
        // every 5xx with its reason, at most once a second per route and cause, with the count held back since
        const line = { requestId: set.headers['x-request-id'], method: request.method, route: route || 'unmatched', status, durationMs: durationMs(set), code: body.code }
        if (error instanceof ApiError) logServerError(`${line.route}:${body.code}`, (suppressed) => log.error({ ...line, suppressed }, `request answered ${status}: ${body.detail}`))
        else {
          const message = (error as Error)?.message ?? String(error)
          logServerError(`${line.route}:${message.slice(0, 200)}`, (suppressed) => log.error({ ...line, suppressed, err: error }, `request failed: ${message}`))
        }
      }
      set.status = status
      set.headers['content-type'] = 'application/json'
      for (const [k, v] of Object.entries(headers)) set.headers[k] = v
      answered(request, route, path, status, set)
      return body
    })
    .onAfterHandle({ as: 'global' }, function countAnswer({ request, route, set, path, response }) {
      answered(request, route, path, response instanceof Response ? response.status : typeof set.status === 'number' ? set.status : 200, set)
    })
    .options('/api/*', ({ request, set }) => {
      Object.assign(set.headers, apiPreflightHeaders(request))
      set.status = 204
      return ''
    }, { detail: { hide: true } })
    .use(opsRoutes({ metrics, readiness: services.readiness }))
    .use(captureRoutes({ capture: services.capture, metrics, body: bodyLimits, trustProxy: services.auth.trustProxy }))
    .use(decideRoutes({ decide: services.flags.decide, metrics, body: bodyLimits, trustProxy: services.auth.trustProxy }))
    .use(recordingIngestRoutes({ ingest: services.recordingIngest, body: { ...bodyLimits, maxBytes: maxRecordingBytes }, trustProxy: services.auth.trustProxy }))
    .use(remoteConfigRoutes({ tokens: services.tokens, projects: services.flags.cache }))
    .use(publicSurveyRoutes({ tokens: services.tokens, list: services.publicSurveys }))
    .use(privateApiRoutes(services, privateApi, bodyLimits))
    .use(clientScriptRoutes({ scripts: ClientScripts.fromPackage() }))
    // console sign-in and sign-out: JSON read within their own small cap (users/login-body.ts), outside the private
    // API's parse hook, which would ask for a key first
    .use(
      signInRoutes({
        users: services.users,
        auth: services.auth,
        limiter: services.apiLimiter,
        trustProxy: services.config.TRUST_PROXY,
        body: bodyLimits,
        originRefused: () => metrics.originRefused.inc(),
      }),
    )
    .use(consoleRoutes())
  // The document is built when first asked for, from every route registered by then.
  return app.use(apiDocsRoutes(DOCUMENT_INFO, { cookie: SESSION_COOKIE, csrfCookie: CSRF_COOKIE, csrfHeader: CSRF_HEADER }, () => base.routes as never))
}

/**
 * The private REST API: each body read through the capped reader (size, time, bytes in flight, chunked included)
 * and JSON parsed within the value budget. Its parse hook is this group's own, so that the public routes, which read
 * their bodies themselves, never pay for it.
 */
function privateApiRoutes(services: Services, privateApi: PrivateApiDeps, bodyLimits: BodyLimits) {
  const trustProxy = services.auth.trustProxy
  const parse = cappedBodyParser(bodyLimits)
  // reads of the event store and their answers' encoding run on the analytics threads (src/analytics/)
  const offload = services.analytics.offload
  return new Elysia({ name: 'private-api' })
    .onParse(async ({ request, contentType, server }) => {
      const address = clientIp(request, server?.requestIP(request)?.address, trustProxy)
      // the key (or the session and its CSRF header) is checked before a byte of the body is read: an anonymous
      // 70 MB chunked body is not parsed first; the route's guard then reuses this answer
      if (request.body !== null) await services.auth.authenticateRequest(request, address)
      return parse(request, contentType, address)
    })
    .use(
      projectRoutes({
        sql: services.db.sql,
        auth: services.auth,
        tokens: services.tokens,
        limiter: services.apiLimiter,
        trustProxy: services.config.TRUST_PROXY,
        // the replay settings travel with the project's flags: other processes reload them as they reload flags
        recordingSettings: {
          changedIn: (tx, teamId) => bumpFlagVersion(tx, teamId, services.db.supportsNotify),
          onChanged: (teamId) => services.flags.cache.refresh(teamId),
        },
      }),
    )
    .use(eventRoutes({ offload, auth: services.auth, limiter: services.apiLimiter, trustProxy: services.config.TRUST_PROXY }))
    .use(eventValueRoutes({ offload, auth: services.auth, limiter: services.apiLimiter }))
    .use(personalKeyRoutes(privateApi))
    .use(definitionRoutes(privateApi))
    .use(personRoutes({ ...privateApi, erasure: services.erasure, metrics: services.metrics }))
    .use(
      groupTypeRoutes({
        ...privateApi,
        changedIn: (tx, teamId) => bumpFlagVersion(tx, teamId, services.db.supportsNotify),
        onChanged: (teamId) => services.flags.cache.refresh(teamId),
      }),
    )
    .use(flagRoutes({ flags: services.flags.service, auth: services.auth, tokens: services.tokens, limiter: services.apiLimiter, trustProxy: services.config.TRUST_PROXY }))
    .use(experimentRoutes({ experiments: services.experiments, offload, auth: services.auth, limiter: services.apiLimiter, trustProxy: services.config.TRUST_PROXY }))
    .use(errorTrackingRoutes({ errorTracking: new ErrorTrackingService({ sql: services.db.sql }), offload, auth: services.auth, limiter: services.apiLimiter, trustProxy: services.config.TRUST_PROXY }))
    .use(surveyRoutes({ surveys: services.surveys, offload, auth: services.auth, limiter: services.apiLimiter, trustProxy: services.config.TRUST_PROXY }))
    .use(cohortRoutes({ cohorts: services.cohorts, auth: services.auth, limiter: services.apiLimiter, trustProxy: services.config.TRUST_PROXY, metrics: services.metrics }))
    .use(actionRoutes(privateApi))
    .use(recordingRoutes({ offload, auth: services.auth, limiter: services.apiLimiter }))
    .use(memberRoutes(privateApi))
    .use(backupRoutes({ ...privateApi, dataDir: services.config.DATA_DIR, backups: services.backups }))
    // the signed-in user (sign-in and sign-out read their own bodies: mounted beside this group, in createApp)
    .use(currentUserRoutes({ users: services.users, auth: services.auth, limiter: services.apiLimiter }))
    .use(flagHistoryRoutes(privateApi))
    .use(queryRoutes({ offload, auth: services.auth, limiter: services.apiLimiter }))
    .use(insightRoutes({ offload, auth: services.auth, limiter: services.apiLimiter, trustProxy: services.config.TRUST_PROXY }))
    .use(dashboardRoutes({ offload, auth: services.auth, limiter: services.apiLimiter, trustProxy: services.config.TRUST_PROXY }))
}

export type App = ReturnType<typeof createApp>
