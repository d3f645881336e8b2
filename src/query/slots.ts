// Query slots shared fairly between projects. At most `total` statements run at once, and one project holds at
// most `perProject` of them (half, rounded up): a project's slow queries leave room for the others. Waiting
// projects are served in turn (round-robin), each project's own queries in the order they came; the wait counts
// against the query's time.
import { QueryRunError } from './runner'

interface Waiter {
  grant: () => void
  fail: (error: QueryRunError) => void
}

export class FairSlots {
  readonly perProject: number
  private running = 0
  private readonly runningBy = new Map<number, number>()
  /** waiting queries by project; the map's order is the turn order */
  private readonly waiting = new Map<number, Waiter[]>()
  private waitingCount = 0

  constructor(
    readonly total: number,
    perProject?: number,
  ) {
    this.perProject = Math.max(1, Math.min(total, perProject ?? Math.ceil(total / 2)))
  }

  use(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waitingCount }
  }

  /** A slot for one of `project`'s statements; call the answer to give it back (once is enough, more is harmless). */
  acquire(project: number, deadline: number, signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new QueryRunError('The client went away before the query ran', 'client_closed'))
    if (!this.waiting.has(project) && this.free(project)) return Promise.resolve(this.take(project))
    return new Promise((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        const queue = this.waiting.get(project)
        const at = queue?.indexOf(waiter) ?? -1
        if (queue && at >= 0) {
          queue.splice(at, 1)
          this.waitingCount--
          if (queue.length === 0) this.waiting.delete(project)
        }
      }
      const waiter: Waiter = {
        grant: () => {
          leave()
          resolve(this.take(project))
        },
        fail: (error) => {
          leave()
          reject(error)
          this.dispatch() // its place may have been what held others back
        },
      }
      const timer = setTimeout(() => waiter.fail(new QueryRunError('The query waited longer than its time for a free slot', 'timeout')), Math.max(1, deadline - Date.now()))
      const onAbort = () => waiter.fail(new QueryRunError('The client went away while the query waited for a slot', 'client_closed'))
      signal?.addEventListener('abort', onAbort, { once: true })
      const queue = this.waiting.get(project)
      if (queue) queue.push(waiter)
      else this.waiting.set(project, [waiter])
      this.waitingCount++
    })
  }

  private free(project: number): boolean {
    return this.running < this.total && (this.runningBy.get(project) ?? 0) < this.perProject
  }

  private take(project: number): () => void {
    this.running++
    this.runningBy.set(project, (this.runningBy.get(project) ?? 0) + 1)
    let given = false
    return () => {
      if (given) return
      given = true
      this.running--
      const left = (this.runningBy.get(project) ?? 1) - 1
      if (left === 0) this.runningBy.delete(project)
      else this.runningBy.set(project, left)
      this.dispatch()
    }
  }

  /** Fill free slots from the waiting projects, in turn. */
  private dispatch(): void {
    while (this.running < this.total) {
      let next: number | undefined
      for (const project of this.waiting.keys()) {
        if (this.free(project)) {
          next = project
          break
        }
      }
      if (next === undefined) return
      const queue = this.waiting.get(next)!
      // its turn taken: it goes to the back of the line
      this.waiting.delete(next)
      this.waiting.set(next, queue)
      queue[0]!.grant()
    }
  }
}
