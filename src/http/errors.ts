import { isConnectionError as isUnreachable, isUniqueViolation } from '../db/postgres'

// The one error type of the service, and the one place that turns any error into {type, code, detail, attr}.

export type ErrorType =
  | 'validation_error'
  | 'authentication_error'
  | 'invalid_request'
  | 'client_error'
  | 'throttled_error'
  | 'server_error'

export interface ErrorBody {
  type: ErrorType
  code: string
  detail: string
  attr: string | null
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: ErrorType,
    readonly code: string,
    readonly detail: string,
    readonly attr: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail)
  }

  toBody(): ErrorBody {
    return { type: this.type, code: this.code, detail: this.detail, attr: this.attr }
  }
}

// Constructors for the errors used in more than one place.
export const errors = {
  validation: (code: string, detail: string, attr: string | null = null) =>
    new ApiError(400, 'validation_error', code, detail, attr),
  invalidPayload: (detail: string) => new ApiError(400, 'validation_error', 'invalid_payload', detail),
  tooLarge: () => new ApiError(413, 'client_error', 'request_too_large', 'Request too large.'),
  /** capture: a compressed body expanding past its cap (PostHog's capture answers 413 payload_too_large) */
  payloadTooLarge: (detail: string) => new ApiError(413, 'client_error', 'payload_too_large', detail),
  /** capture: one event over the per-event cap; the whole request is refused (PostHog's EventTooBig) */
  eventTooBig: (detail: string) => new ApiError(413, 'client_error', 'event_too_big', detail),
  bodyTimeout: (ms: number) =>
    new ApiError(408, 'client_error', 'request_timeout', `The request body did not arrive within ${ms} ms.`, null, { connection: 'close' }),
  /** the client closed the connection before its body arrived: nobody reads this answer, it is counted and logged at debug */
  clientClosed: () => new ApiError(499, 'client_error', 'client_closed', 'The client closed the connection before the request body arrived.'),
  /** past MAX_INFLIGHT_BODY_BYTES (or one address's share of it): the client retries; the unread rest closes the connection */
  bodyBudget: () =>
    new ApiError(503, 'server_error', 'too_many_bodies_in_flight', 'The server is receiving too much data at once. Please retry shortly.', null, {
      'retry-after': '1',
      connection: 'close',
    }),
  notFound: (detail = 'Not found.') => new ApiError(404, 'invalid_request', 'not_found', detail),
  permissionDenied: (detail: string) => new ApiError(403, 'authentication_error', 'permission_denied', detail),
  notAuthenticated: () =>
    new ApiError(401, 'authentication_error', 'not_authenticated', 'Authentication credentials were not provided.'),
  invalidPersonalKey: (source = 'Authorization header') =>
    new ApiError(
      401,
      'authentication_error',
      'invalid_personal_api_key',
      `Personal API key found in request ${source} is invalid.`,
    ),
  missingApiKey: () =>
    new ApiError(
      401,
      'authentication_error',
      'missing_api_key',
      'API key not provided. You can find your project API key in PostHog project settings.',
    ),
  invalidApiKey: () =>
    new ApiError(
      401,
      'authentication_error',
      'invalid_api_key',
      'Project API key invalid. You can find your project API key in PostHog project settings.',
    ),
  invalidProject: () =>
    new ApiError(400, 'validation_error', 'invalid_project', 'The project id is invalid.', 'project_id'),
  fetchTeamFail: () =>
    new ApiError(
      503,
      'server_error',
      'fetch_team_fail',
      'Unable to fetch team from database.',
      null,
      { 'retry-after': '1' },
    ),
  unavailable: (code: string, detail: string) =>
    new ApiError(503, 'server_error', code, detail, null, { 'retry-after': '1' }),
  databaseUnavailable: () =>
    new ApiError(
      503,
      'server_error',
      'database_unavailable',
      "We couldn't reach the database just now. Please try again in a moment.",
      null,
      { 'retry-after': '1' },
    ),
  throttled: (retryAfterSeconds: number) =>
    new ApiError(
      429,
      'throttled_error',
      'throttled',
      `Request was throttled. Expected available in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}.`,
      null,
      { 'retry-after': String(retryAfterSeconds) },
    ),
  /** PostHog capture's answer past a limit of the sender's (429 rate_limited), with when to retry */
  rateLimited: (detail: string, retryAfterSeconds = 1) =>
    new ApiError(429, 'throttled_error', 'rate_limited', detail, null, { 'retry-after': String(retryAfterSeconds) }),
  methodNotAllowed: (method: string) =>
    new ApiError(405, 'invalid_request', 'method_not_allowed', `Method "${method}" not allowed.`),
}

/** Elysia validation errors carry the failing value's JSON pointer; report it as attr (a/b/0 → a__b__0). */
function attrFromPath(path: unknown): string | null {
  if (typeof path !== 'string' || path === '' || path === '/') return null
  return path.replace(/^\//, '').split('/').join('__')
}

interface ValidationLike {
  type?: string
  all?: Array<{ path?: string; summary?: string; message?: string }>
}

/** A Postgres error that a request's own data caused (class 22: data exception), e.g. a NUL in text. */
function isPostgresDataError(error: unknown): boolean {
  const e = error as { name?: string; code?: string }
  return e?.name === 'PostgresError' && typeof e.code === 'string' && e.code.startsWith('22')
}

/** Map anything thrown in a request to a status and an error body. */
export function toErrorResponse(code: string | number, error: unknown): { status: number; body: ErrorBody; headers: Record<string, string> } {
  // a body parser's own refusal (413, 408, 503, a value budget) reaches us wrapped in Elysia's ParseError
  const cause = code === 'PARSE' ? (error as { cause?: unknown })?.cause : undefined
  if (cause instanceof ApiError) return { status: cause.status, body: cause.toBody(), headers: cause.headers }
  if (error instanceof ApiError) return { status: error.status, body: error.toBody(), headers: error.headers }
  if (isPostgresDataError(error)) {
    return { status: 400, body: errors.validation('invalid_input', 'The request holds a value that cannot be stored or searched (e.g. a NUL character).').toBody(), headers: {} }
  }
  if (isUnreachable(error)) return { status: 503, body: errors.databaseUnavailable().toBody(), headers: { 'retry-after': '1' } }
  switch (code) {
    case 'VALIDATION': {
      const v = error as ValidationLike
      const first = v.all?.[0]
      const attr = attrFromPath(first?.path)
      const where = (error as { type?: string }).type
      const detail = first?.summary || first?.message || 'Invalid input.'
      return {
        status: 400,
        body: {
          type: 'validation_error',
          code: 'invalid_input',
          detail: attr ? `${detail}` : `Invalid ${where ?? 'input'}: ${detail}`,
          attr,
        },
        headers: {},
      }
    }
    case 'NOT_FOUND':
      return { status: 404, body: errors.notFound().toBody(), headers: {} }
    case 'PARSE':
      return {
        status: 400,
        body: { type: 'validation_error', code: 'parse_error', detail: 'Malformed request body.', attr: null },
        headers: {},
      }
    case 'INVALID_COOKIE_SIGNATURE':
    case 'INVALID_FILE_TYPE':
      return { status: 400, body: { type: 'validation_error', code: 'invalid_input', detail: String((error as Error)?.message ?? 'Invalid input.'), attr: null }, headers: {} }
    default:
      return {
        status: 500,
        body: { type: 'server_error', code: 'error', detail: 'A server error occurred.', attr: null },
        headers: {},
      }
  }
}

/**
 * A service's database work: Postgres unreachable → 503 database_unavailable; a unique violation → what
 * `onUnique` says (a 400 naming the field); ApiErrors pass; anything else is a bug (500).
 */
export async function databaseWork<T>(fn: () => Promise<T>, onUnique?: () => ApiError): Promise<T> {
  try {
    return await fn()
  } catch (error) {
    if (error instanceof ApiError) throw error
    if (isUnreachable(error)) throw errors.databaseUnavailable()
    if (onUnique && isUniqueViolation(error)) throw onUnique()
    throw error
  }
}
