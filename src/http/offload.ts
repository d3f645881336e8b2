// Work a route hands to another thread (the analytics thread, src/analytics/): the route parses and checks its input
// on the serving thread, names the operation and its arguments, and gets back a finished answer (the JSON already
// encoded there). Each capability declares its operations as plain functions over the services they need; the
// thread that runs them owns those services. Arguments and answers cross threads, so they are plain data.

/** One operation: what the route could have called itself, given the services and plain arguments. */
// biome-ignore lint: the arguments' type is each operation's own
export type Operation<S> = (services: S, args: any, signal: AbortSignal) => unknown

export type Operations<S> = Record<string, Operation<S>>

export interface OffloadOptions {
  /** the request served: its client leaving cancels the work where it runs; its Accept-Encoding may ask for gzip */
  request?: Request
  /** the status of a successful answer (201 for a create) */
  status?: number
}

/** Runs an operation elsewhere and answers its result as a Response (errors are thrown as ApiError). */
export type Offload<O extends Operations<never>> = <K extends keyof O & string>(op: K, args: Parameters<O[K]>[1], options?: OffloadOptions) => Promise<Response>

/**
 * An operation's answer that is text of another type rather than JSON (session recordings' JSON lines): the
 * thread that runs it sends the text as it is, with this content type.
 */
export class TextAnswer {
  constructor(
    readonly text: string,
    readonly contentType: string,
  ) {}
}

/** The client takes gzip (browsers and PostHog's clients say so; a bare curl does not). */
export function acceptsGzip(request: Request | undefined): boolean {
  const accepted = request?.headers.get('accept-encoding')
  return accepted !== null && accepted !== undefined && /(^|[\s,])gzip(\s*;\s*q=(?!0(\.0*)?\s*(,|$))[\d.]+)?\s*(,|$)/i.test(accepted)
}

/** Bytes one answer writes to its socket at a time. */
const CHUNK_BYTES = 64 * 1024
/** Bytes all answers together write in one turn of the event loop (the rest wait for the next turns). */
const TURN_BYTES = 2 * CHUNK_BYTES

/**
 * Turns of the event loop shared by every large answer being written: at most TURN_BYTES a turn, whatever the number
 * of answers, first come first served. Each answer yielding on its own still let sixteen of them write a megabyte in
 * one turn (every waiting callback runs in the same phase of the loop).
 */
const waitingWriters: (() => void)[] = []
let turnScheduled = false

function releaseTurn(): void {
  turnScheduled = false
  for (let written = 0; waitingWriters.length > 0 && written < TURN_BYTES; written += CHUNK_BYTES) waitingWriters.shift()!()
  if (waitingWriters.length > 0) scheduleTurn()
}

function scheduleTurn(): void {
  if (turnScheduled) return
  turnScheduled = true
  setImmediate(releaseTurn)
}

/** Resolves in a later turn of the event loop, when this writer's chunk fits that turn's budget. */
function writeTurn(): Promise<void> {
  return new Promise<void>((resolve) => {
    waitingWriters.push(resolve)
    scheduleTurn()
  })
}

/**
 * An answer whose JSON is already encoded (and gzipped, when `gzip`). A large one is written 64 KiB at a time, within
 * the turns' shared budget: handed over whole, tens of MB went to the socket in one turn (and were copied into fresh
 * memory first), holding capture and /decide for hundreds of milliseconds.
 */
export function encodedJson(bytes: Uint8Array, status = 200, gzip = false, contentType = 'application/json'): Response {
  const headers: Record<string, string> = { 'content-type': contentType }
  if (gzip) {
    headers['content-encoding'] = 'gzip'
    headers.vary = 'accept-encoding'
  }
  if (bytes.byteLength <= CHUNK_BYTES) return new Response(bytes, { status, headers })
  let at = 0
  const body = new ReadableStream({
    type: 'direct',
    async pull(controller: { write(chunk: Uint8Array): unknown; flush(): unknown; close(): void }) {
      while (at < bytes.byteLength) {
        await writeTurn()
        controller.write(bytes.subarray(at, at + CHUNK_BYTES))
        at += CHUNK_BYTES
        await controller.flush()
      }
      controller.close()
    },
  } as never)
  return new Response(body, { status, headers })
}
