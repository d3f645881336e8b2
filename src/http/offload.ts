// Work a route hands to another thread (the analytics thread, src/analytics/): the route parses and checks its input
// on the serving thread, names the operation and its arguments, and gets back a finished answer (the JSON already
// encoded there). Each capability declares its operations as plain functions over the services they need; the
// thread that runs them owns those services. Arguments and answers cross threads, so they are plain data.

/** One operation: what the route could have called itself, given the services and plain arguments. */
// biome-ignore lint: the arguments' type is each operation's own
export type Operation<S> = (services: S, args: any, signal: AbortSignal) => unknown

export type Operations<S> = Record<string, Operation<S>>

export interface OffloadOptions {
  /** the client left: the work is cancelled where it runs */
  signal?: AbortSignal
  /** the status of a successful answer (201 for a create) */
  status?: number
}

/** Runs an operation elsewhere and answers its result as a Response (errors are thrown as ApiError). */
export type Offload<O extends Operations<never>> = <K extends keyof O & string>(op: K, args: Parameters<O[K]>[1], options?: OffloadOptions) => Promise<Response>

/** An answer whose JSON is already encoded. */
export function encodedJson(bytes: Uint8Array, status = 200): Response {
  return new Response(bytes, { status, headers: { 'content-type': 'application/json' } })
}
