// Request bodies read whole, but never past the cap: a declared length over it is refused before reading,
// and a chunked body is cut off as soon as it passes it. Either way the client gets the 413 error body
// (Bun's own limit, which answers an empty 413 without CORS headers, is set well above this one).
import { errors } from './errors'
import type { InflightBodies } from './inflight'

const EMPTY = new Uint8Array(0)
/**
 * A lingering close: before answering 413, what the client keeps sending is read and thrown away, up to these
 * bounds. Clients that write the whole body before reading (Python's urllib and requests, curl without
 * Expect) otherwise see a reset or a broken pipe instead of the answer.
 */
const LINGER_MAX_BYTES = 128 * 1024 * 1024
const LINGER_MS = 5000
/** ... and only while the client keeps sending: one that declared more than it sends is answered at once. */
const LINGER_IDLE_MS = 250

async function discardRest(reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> }): Promise<void> {
  const deadline = Date.now() + LINGER_MS
  let seen = 0
  try {
    while (seen < LINGER_MAX_BYTES) {
      const left = deadline - Date.now()
      if (left <= 0) break
      const next = await Promise.race([reader.read(), Bun.sleep(Math.min(left, LINGER_IDLE_MS)).then(() => null)])
      if (next === null || next.done) break
      seen += next.value?.byteLength ?? 0
    }
  } finally {
    await reader.cancel().catch(() => undefined)
  }
}

/** Refuse an oversized request with 413, after reading and discarding (bounded) what the client still sends. */
export async function refuseTooLarge(request: Request): Promise<never> {
  if (request.body !== null && !request.bodyUsed) await discardRest(request.body.getReader())
  throw errors.tooLarge()
}

/** How long a body may take to arrive, and how large it may be. */
export interface BodyLimits {
  maxBytes: number
  /**
   * The whole body must have arrived this long after the handler started reading it: a client trickling a byte
   * every second held its connection (and its buffers) for as long as it liked; 5,000 of them held 38 MB.
   */
  timeoutMs: number
  /** the process-wide budget of bytes being received (503 past it); none: unbounded (unit tests) */
  inflight?: InflightBodies
}

/**
 * Bodies up to this declared size are read with one `arrayBuffer()`: the stream reader below costs several times
 * more per request (a 200-byte /decide body read through it took the server from 8.5k to 2.3k req/s), and a
 * declared length already bounds what Bun buffers. Larger or chunked bodies take the stream, which stops at the cap.
 */
const DECLARED_FAST_PATH_BYTES = 256 * 1024

/**
 * Read the body whole, within the limits: 413 past the size (after a bounded linger), 408 past the time, 503 past
 * the bytes in flight (`address`'s share or the whole budget); a client that left before it was all sent fails the
 * read, which the app's error handler answers 499 client_closed.
 * Not an async function: the small-body path, every /decide and most captures, makes one promise, not three.
 */
export function readCappedBody(request: Request, limits: BodyLimits, address: string | null = null): Promise<Uint8Array> {
  if (request.method !== 'POST' && request.method !== 'PUT' && request.method !== 'PATCH' && request.method !== 'DELETE') return Promise.resolve(EMPTY)
  const { maxBytes, inflight } = limits
  const declared = request.headers.get('content-length')
  const length = declared === null ? -1 : Number(declared)
  if (length > maxBytes) return refuseTooLarge(request)
  if (length === 0 || (length < 0 && request.body === null)) return Promise.resolve(EMPTY)
  // A small declared body reserves its whole length up front and is read at once; a larger or chunked one reserves
  // each chunk as it comes (readStream): a client that declared 20 MB and sends nothing holds nothing of the budget.
  // Declared lengths may hold only part of the budget: past it, a small body takes the stream too.
  if (length > 0 && length <= DECLARED_FAST_PATH_BYTES) {
    const admitted = inflight ? inflight.reserveDeclared(address, length) : 'reserved'
    if (admitted === 'refused') return Promise.reject(errors.bodyBudget())
    if (admitted === 'reserved') return readDeclared(request, limits.timeoutMs, () => inflight?.release(address, length, true))
  }
  return readStreamed(request, limits, address)
}

async function readStreamed(request: Request, limits: BodyLimits, address: string | null): Promise<Uint8Array> {
  const held = { bytes: 0 }
  // a client that goes away mid-body fails the read; the app's error handler makes that a 499 (client_closed)
  try {
    if (request.body === null) return EMPTY
    return await readStream(request.body, limits, { address, held })
  } finally {
    limits.inflight?.release(address, held.bytes)
  }
}

/**
 * Small reads waiting for their bodies, swept by one timer: a timer (and a race) per request cost /decide more than
 * the read itself. A read is failed with 408 within a quarter of a second of its deadline.
 */
const SWEEP_MS = 250
const waitingReads = new Set<{ due: number; fail(): void }>()
let sweeper: Timer | null = null
function sweepLateReads(): void {
  const now = Date.now()
  for (const read of waitingReads) if (read.due <= now) read.fail()
}

/** A small body of declared length, whole, or 408 when it has not arrived in time (the 408 closes the connection). */
function readDeclared(request: Request, timeoutMs: number, done: () => void): Promise<Uint8Array> {
  if (sweeper === null) {
    sweeper = setInterval(sweepLateReads, SWEEP_MS)
    sweeper.unref()
  }
  return new Promise<Uint8Array>((resolve, reject) => {
    let settled = false
    const read = {
      due: Date.now() + timeoutMs,
      // the read is abandoned: when the connection closes it fails, and nobody waits for it any more
      fail: () => settle(() => reject(errors.bodyTimeout(timeoutMs))),
    }
    const settle = (then: () => void) => {
      if (settled) return
      settled = true
      waitingReads.delete(read)
      done()
      then()
    }
    waitingReads.add(read)
    request.arrayBuffer().then(
      (buffer) => settle(() => resolve(new Uint8Array(buffer))),
      (error) => settle(() => reject(error)),
    )
  })
}

async function readStream(stream: ReadableStream<Uint8Array>, limits: BodyLimits, reservation: { address: string | null; held: { bytes: number } }): Promise<Uint8Array> {
  const { maxBytes, inflight } = limits
  const reader = stream.getReader()
  let timedOut = false
  // cancelling the read ends the handler's wait; the 408 then closes the connection
  const timer = setTimeout(() => {
    timedOut = true
    reader.cancel().catch(() => undefined)
  }, limits.timeoutMs)
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > maxBytes) {
        clearTimeout(timer)
        await discardRest(reader)
        throw errors.tooLarge()
      }
      if (inflight) {
        if (!inflight.reserve(reservation.address, value.byteLength, reservation.held.bytes)) {
          reader.cancel().catch(() => undefined)
          throw errors.bodyBudget()
        }
        reservation.held.bytes += value.byteLength
      }
      chunks.push(value)
    }
  } catch (error) {
    if (timedOut) throw errors.bodyTimeout(limits.timeoutMs)
    throw error
  } finally {
    clearTimeout(timer)
  }
  if (timedOut) throw errors.bodyTimeout(limits.timeoutMs)
  if (chunks.length === 1) return chunks[0]
  const body = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    body.set(chunk, offset)
    offset += chunk.byteLength
  }
  return body
}

/** Bun's own cap: far enough above ours that our handler, not Bun, answers an oversized request. */
export function serverBodyLimit(maxBytes: number): number {
  return Math.max(maxBytes * 4, 64 * 1024 * 1024)
}
