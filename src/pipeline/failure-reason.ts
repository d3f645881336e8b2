// Why a consumer's batch failed, in one word an alert can match: a store that cannot be reached
// (`unreachable`), one that did not answer in time (`timeout`), or what the store itself said (the fallback,
// see isolate.ts). Errors arrive wrapped (a StoreError around the client's error, a client error around the
// socket's), so the whole cause chain is read.

/** Socket, DNS and driver codes that mean the store could not be reached or dropped the connection. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  // Bun's fetch and undici
  'ConnectionRefused',
  'ConnectionClosed',
  'FailedToOpenSocket',
  'UND_ERR_SOCKET',
  // postgres.js
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  // Postgres SQLSTATE: shutting down, starting up, connection exceptions
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
])

const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'CONNECT_TIMEOUT', // postgres.js
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  '57014', // Postgres: statement cancelled (statement_timeout)
  '159', // ClickHouse: TIMEOUT_EXCEEDED
  '209', // ClickHouse: SOCKET_TIMEOUT
])

/** @clickhouse/client's own request timeout carries no code, only this message. */
const TIMEOUT_MESSAGE = /^Timeout error\.?$|\btimed out\b|\bETIMEDOUT\b/i
const UNREACHABLE_MESSAGE = /\bsocket hang up\b|\bECONNREFUSED\b|\bECONNRESET\b|\bENOTFOUND\b/

/** The errors of a chain: the error, its causes, an AggregateError's members (bounded). */
function* chain(error: unknown, depth = 0): Generator<unknown> {
  if (error === null || error === undefined || depth > 5) return
  yield error
  if (error instanceof AggregateError) for (const e of error.errors.slice(0, 5)) yield* chain(e, depth + 1)
  if (typeof error === 'object' && 'cause' in error) yield* chain((error as { cause?: unknown }).cause, depth + 1)
}

/** `unreachable`, `timeout`, or null when the failure is neither (the store answered and refused). */
export function connectionFailure(error: unknown): 'unreachable' | 'timeout' | null {
  let timeout = false
  for (const e of chain(error)) {
    const code = (e as { code?: unknown })?.code
    const text = typeof code === 'string' || typeof code === 'number' ? String(code) : ''
    if (UNREACHABLE_CODES.has(text)) return 'unreachable'
    if (TIMEOUT_CODES.has(text) || (e as Error)?.name === 'TimeoutError') timeout = true
    const message = (e as Error)?.message
    if (typeof message === 'string') {
      // ClickHouse 18.16 puts its code in the message only ("Code: 159, e.displayText() = …")
      const serverCode = /^Code: (\d+)/.exec(message)?.[1]
      if (serverCode && TIMEOUT_CODES.has(serverCode)) timeout = true
      if (TIMEOUT_MESSAGE.test(message)) timeout = true
      else if (UNREACHABLE_MESSAGE.test(message)) return 'unreachable'
    }
  }
  return timeout ? 'timeout' : null
}
