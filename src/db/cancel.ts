// A statement run for an API request is cancelled in Postgres when the client goes away: a slow listing does
// not keep a connection busy (and a statement_timeout's worth of work) for an answer nobody will read.
// The request's AbortSignal travels with the request's async context, so repositories need no extra argument.
import { AsyncLocalStorage } from 'node:async_hooks'

const requestSignal = new AsyncLocalStorage<AbortSignal>()

/** Called when a request starts: everything that request awaits sees its signal. */
export function bindRequestSignal(signal: AbortSignal): void {
  requestSignal.enterWith(signal)
}

/**
 * Cancel this query when the current request's client disconnects. Only for reads a request owns alone: a load
 * shared by concurrent requests (a cache fill) must not die with the first client that leaves.
 */
export function cancelledWithRequest<Q extends { cancel(): unknown }>(query: Q): Q {
  const signal = requestSignal.getStore()
  if (!signal) return query
  if (signal.aborted) query.cancel()
  else signal.addEventListener('abort', () => query.cancel(), { once: true })
  return query
}
