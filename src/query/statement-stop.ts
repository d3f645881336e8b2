// How an embedded runner stops a statement: at its deadline or when its client leaves, whichever comes first. The
// runner says how (kill its process, interrupt its connection) and, once the statement has ended, asks why.
import type { RunOptions } from './runner'
import { clientClosed, timedOut } from './store-errors'

export type StopReason = 'timeout' | 'client_closed'

export class StatementStop {
  /** why the statement was stopped; null while nothing stopped it */
  reason: StopReason | null = null
  /** settles when the statement is stopped: a runner need not wait for a store that finishes late */
  readonly stopped: Promise<void>
  private markStopped!: () => void
  private readonly timer: ReturnType<typeof setTimeout>
  private readonly onClientGone = () => this.stop('client_closed')

  constructor(
    private readonly options: RunOptions,
    deadline: number,
    private readonly onStop: (why: StopReason) => void,
  ) {
    this.stopped = new Promise<void>((resolve) => (this.markStopped = resolve))
    this.timer = setTimeout(() => this.stop('timeout'), Math.max(1, deadline - Date.now()))
    if (options.signal?.aborted) this.onClientGone()
    options.signal?.addEventListener('abort', this.onClientGone, { once: true })
  }

  private stop(why: StopReason): void {
    this.reason ??= why
    this.markStopped()
    this.onStop(why)
  }

  /** The error a stopped statement answers (`cause`: what the store said when it stopped); null when not stopped. */
  error(cause?: unknown) {
    if (this.reason === 'client_closed') return clientClosed(cause)
    if (this.reason === 'timeout') return timedOut(this.options.timeoutMs, cause)
    return null
  }

  done(): void {
    clearTimeout(this.timer)
    this.options.signal?.removeEventListener('abort', this.onClientGone)
  }
}
