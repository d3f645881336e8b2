// The serving thread's side of the analytics threads (worker.ts): each private API read of the event store is sent
// to the least busy thread and answered with the bytes it sends back. The serving thread never builds, parses or
// encodes an analytics answer; what it keeps is the promise that every request is answered: at the deadline it
// answers 504 itself (the work is cancelled there), a thread that fails answers its requests 503 and is started
// again, and a thread with too much waiting refuses more with 503 before it queues them.
import type { Config } from '../config'
import { ApiError } from '../http/errors'
import { acceptsGzip, encodedJson, type Offload, type OffloadOptions } from '../http/offload'
import type { Logger } from '../log'
import type { Metrics } from '../ops/metrics'
import { applyMetricCalls } from './metrics-relay'
import type { AnalyticsOperations } from './operations'
import type { FromAnalytics, ToAnalytics } from './protocol'

const WORKER = new URL('./worker.ts', import.meta.url)

/** How long past QUERY_TIMEOUT_MS the serving thread waits for a thread's answer (the store's own 504 comes first). */
export const ANSWER_GRACE_MS = 5_000
/** How long a thread may take to open its stores before boot fails. */
const START_TIMEOUT_MS = 60_000

/** Seconds of the server's idle timeout: past the analytics deadline, so a slow request is answered, never cut off. */
export function httpIdleTimeoutSeconds(config: Pick<Config, 'QUERY_TIMEOUT_MS'>): number {
  return Math.min(255, Math.max(30, Math.ceil((config.QUERY_TIMEOUT_MS + ANSWER_GRACE_MS) / 1000) + 10))
}

interface Pending {
  op: string
  status: number
  resolve(response: Response): void
  reject(error: unknown): void
  timer: ReturnType<typeof setTimeout>
  detach(): void
}

export interface AnalyticsThreadsOptions {
  config: Config
  log: Logger
  metrics: Metrics
  /** the threads' entry (the tests give one that misbehaves on purpose) */
  workerUrl?: URL
  /** how long past QUERY_TIMEOUT_MS the serving thread waits (ANSWER_GRACE_MS) */
  graceMs?: number
}

class AnalyticsThread {
  worker: Worker | undefined
  readonly pending = new Map<number, Pending>()
  private closing: (() => void) | undefined

  constructor(
    private readonly index: number,
    private readonly options: AnalyticsThreadsOptions,
  ) {}

  start(): Promise<void> {
    const { config, log, metrics } = this.options
    return new Promise<void>((resolve, reject) => {
      const worker = new Worker((this.options.workerUrl ?? WORKER).href)
      this.worker = worker
      const timer = setTimeout(() => {
        this.worker = undefined
        worker.terminate()
        reject(new Error(`the analytics thread did not open its stores within ${START_TIMEOUT_MS / 1000} s`))
      }, START_TIMEOUT_MS)
      worker.onmessage = (event: MessageEvent<FromAnalytics>) => {
        const m = event.data
        switch (m.type) {
          case 'ready':
            clearTimeout(timer)
            resolve()
            break
          case 'fatal':
            // a thread that could not open its stores serves nothing: the next request starts another
            clearTimeout(timer)
            this.worker = undefined
            worker.terminate()
            reject(Object.assign(new Error(`the analytics thread could not start: ${m.message}`), { stack: m.stack }))
            break
          case 'answer': {
            const p = this.settle(m.id)
            if (!p) break
            metrics.analyticsRequests.inc({ op: p.op, outcome: 'ok' })
            metrics.analyticsAnswerBytes.observe(m.bytes.byteLength)
            p.resolve(encodedJson(m.bytes, p.status, m.gzip, m.contentType))
            break
          }
          case 'error': {
            const p = this.settle(m.id)
            if (!p) break
            metrics.analyticsRequests.inc({ op: p.op, outcome: m.status === 499 ? 'client_closed' : 'error' })
            p.reject(new ApiError(m.status, m.body.type, m.body.code, m.body.detail, m.body.attr, m.headers))
            break
          }
          case 'metrics':
            applyMetricCalls(metrics, m.calls)
            break
          case 'closed':
            this.closing?.()
            break
        }
      }
      // a thread that dies answers what it held (503, retry) and is started again for the next request
      worker.onerror = (event: ErrorEvent) => {
        event.preventDefault?.()
        clearTimeout(timer)
        log.error({ err: event.error ?? new Error(event.message), thread: this.index }, `analytics thread ${this.index} failed: ${event.message}`)
        this.fail('thread_failed')
        this.worker = undefined
        worker.terminate()
        reject(new Error(`the analytics thread failed: ${event.message}`))
      }
      worker.postMessage({ type: 'init', config } satisfies ToAnalytics)
    })
  }

  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id)
    if (!p) return undefined
    this.pending.delete(id)
    clearTimeout(p.timer)
    p.detach()
    this.options.metrics.analyticsQueue.dec()
    return p
  }

  /** Every request this thread holds answered 503 (it failed or is going away). */
  fail(outcome: string): void {
    for (const id of [...this.pending.keys()]) {
      const p = this.settle(id)!
      this.options.metrics.analyticsRequests.inc({ op: p.op, outcome })
      p.reject(new ApiError(503, 'server_error', 'analytics_unavailable', 'The analytics thread stopped while answering. Please retry.', null, { 'retry-after': '1' }))
    }
  }

  call(id: number, op: string, args: unknown, options: OffloadOptions): Promise<Response> {
    const { config, metrics } = this.options
    const graceMs = this.options.graceMs ?? ANSWER_GRACE_MS
    const waitMs = config.QUERY_TIMEOUT_MS + graceMs
    const worker = this.worker!
    const signal = options.request?.signal
    // compressed there: the serving thread writes a tenth of the bytes
    const gzip = acceptsGzip(options.request)
    return new Promise<Response>((resolve, reject) => {
      const cancel = () => worker.postMessage({ type: 'cancel', id } satisfies ToAnalytics)
      const onAbort = () => {
        const p = this.settle(id)
        if (!p) return
        cancel()
        metrics.analyticsRequests.inc({ op, outcome: 'client_closed' })
        p.reject(new ApiError(499, 'client_error', 'client_closed', 'The client closed the connection before the answer was ready.'))
      }
      const timer = setTimeout(() => {
        const p = this.settle(id)
        if (!p) return
        cancel()
        metrics.analyticsRequests.inc({ op, outcome: 'timeout' })
        p.reject(
          new ApiError(504, 'server_error', 'query_timeout', `The answer was not ready within ${Math.round(waitMs / 1000)} s (QUERY_TIMEOUT_MS and the answer's encoding): it was cancelled. Please retry, or narrow the query.`, null, {
            'retry-after': '5',
          }),
        )
      }, waitMs)
      signal?.addEventListener('abort', onAbort, { once: true })
      this.pending.set(id, { op, status: options.status ?? 200, resolve, reject, timer, detach: () => signal?.removeEventListener('abort', onAbort) })
      metrics.analyticsQueue.inc()
      worker.postMessage({ type: 'call', id, op, args, gzip, deadline: Date.now() + config.QUERY_TIMEOUT_MS + graceMs / 2 } satisfies ToAnalytics)
    })
  }

  async close(timeoutMs: number): Promise<void> {
    const worker = this.worker
    if (!worker) return
    this.worker = undefined
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs)
      this.closing = () => {
        clearTimeout(timer)
        resolve()
      }
      worker.postMessage({ type: 'close' } satisfies ToAnalytics)
    })
    this.fail('thread_failed')
    worker.terminate()
  }
}

export class AnalyticsThreads {
  private readonly threads: AnalyticsThread[]
  private next = 0
  private restarting: Promise<void> | undefined

  constructor(private readonly options: AnalyticsThreadsOptions) {
    this.threads = Array.from({ length: options.config.ANALYTICS_THREADS }, (_, i) => new AnalyticsThread(i, options))
  }

  async start(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.start()))
  }

  /** Runs an operation on the least busy thread; its answer is a Response of its encoded JSON. */
  readonly offload: Offload<AnalyticsOperations> = async (op, args, options = {}) => {
    if (options.request?.signal.aborted) throw new ApiError(499, 'client_error', 'client_closed', 'The client closed the connection before the answer was ready.')
    const thread = await this.pick()
    if (thread.pending.size >= this.options.config.ANALYTICS_QUEUE_PER_THREAD) {
      this.options.metrics.analyticsRequests.inc({ op, outcome: 'busy' })
      throw new ApiError(503, 'server_error', 'analytics_busy', 'Too many analytics requests are waiting. Please retry shortly.', null, { 'retry-after': '2' })
    }
    return thread.call(this.next++, op, args, options)
  }

  /** Statements running and waiting for a store slot, over every thread (for /metrics and the tests). */
  async slotUse(): Promise<{ running: number; waiting: number }> {
    const use = { running: 0, waiting: 0 }
    for (const thread of this.threads) {
      if (!thread.worker) continue
      const response = await thread.call(this.next++, 'slots.use', [], {})
      const one = (await response.json()) as { running: number; waiting: number }
      use.running += one.running
      use.waiting += one.waiting
    }
    return use
  }

  async close(timeoutMs = 10_000): Promise<void> {
    await Promise.all(this.threads.map((t) => t.close(timeoutMs)))
  }

  /** The thread with the fewest requests; a failed one is started again first. */
  private async pick(): Promise<AnalyticsThread> {
    const dead = this.threads.filter((t) => !t.worker)
    if (dead.length > 0) {
      this.restarting ??= Promise.all(dead.map((t) => t.start()))
        .then(() => undefined)
        .catch((error) => {
          throw new ApiError(503, 'server_error', 'analytics_unavailable', `The analytics thread could not start: ${(error as Error).message}. Please retry.`, null, { 'retry-after': '5' })
        })
        .finally(() => (this.restarting = undefined))
      await this.restarting
    }
    let best = this.threads[0]!
    for (const t of this.threads) if (t.pending.size < best.pending.size) best = t
    return best
  }
}
