// Stored results one project may be reading at once, in bytes: twenty viewers of one heavy dashboard take turns
// instead of pulling hundreds of MB through the metadata store together (on the embedded store, one thread serves
// every project's reads: the others would wait behind them). Past the wait, a retryable 503.
import { ApiError } from '../http/errors'

interface Waiter {
  bytes: number
  grant(): void
}

export class ProjectResultGate {
  private readonly reading = new Map<number, number>()
  private readonly waiting = new Map<number, Waiter[]>()

  constructor(
    /** bytes of stored results one project reads at once */
    private readonly maxBytes: number,
    /** how long a read waits for its turn before 503 */
    private readonly maxWaitMs: number,
  ) {}

  /** Waits for room for `bytes` of this project's results (a read larger than the whole room waits for it empty). */
  async acquire(teamId: number, bytes: number, signal?: AbortSignal): Promise<() => void> {
    const wanted = Math.min(bytes, this.maxBytes)
    const release = () => this.release(teamId, wanted)
    const queue = this.waiting.get(teamId)
    if (!queue?.length && (this.reading.get(teamId) ?? 0) + wanted <= this.maxBytes) {
      this.reading.set(teamId, (this.reading.get(teamId) ?? 0) + wanted)
      return release
    }
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        bytes: wanted,
        grant: () => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', leave)
          resolve()
        },
      }
      const drop = () => {
        const list = this.waiting.get(teamId) ?? []
        const at = list.indexOf(waiter)
        if (at >= 0) list.splice(at, 1)
        if (list.length === 0) this.waiting.delete(teamId)
      }
      const leave = () => {
        drop()
        clearTimeout(timer)
        reject(new ApiError(499, 'client_error', 'client_closed', 'The client closed the connection before the answer was ready.'))
      }
      const timer = setTimeout(() => {
        drop()
        signal?.removeEventListener('abort', leave)
        reject(new ApiError(503, 'server_error', 'dashboard_busy', "This project's dashboards are being read by many viewers at once. Please retry shortly.", null, { 'retry-after': '2' }))
      }, this.maxWaitMs)
      signal?.addEventListener('abort', leave, { once: true })
      const list = this.waiting.get(teamId) ?? []
      list.push(waiter)
      this.waiting.set(teamId, list)
    })
    return release
  }

  /** bytes being read now, over every project (for the tests and /metrics) */
  get readingBytes(): number {
    let total = 0
    for (const bytes of this.reading.values()) total += bytes
    return total
  }

  private release(teamId: number, bytes: number): void {
    let held = (this.reading.get(teamId) ?? bytes) - bytes
    const queue = this.waiting.get(teamId)
    // first come, first served: the next waiter in line, as soon as it fits
    while (queue?.length && held + queue[0]!.bytes <= this.maxBytes) {
      const next = queue.shift()!
      held += next.bytes
      next.grant()
    }
    if (queue && queue.length === 0) this.waiting.delete(teamId)
    if (held <= 0) this.reading.delete(teamId)
    else this.reading.set(teamId, held)
  }
}
