// Turns of the query API's statements on the process's one DuckDB instance (kept by its owner, duckdb-database.ts).
// DuckDB's memory is one pool (EMBEDDED_DUCKDB_MEMORY_MB): a statement that runs out of it may be the one that needs
// too much, or the neighbour of one that took nearly all of it. So every statement's turn notes whether another ran
// beside it; one that ran short beside others is not blamed but run again alone: its turn waits until the statements
// running have ended, and statements that come meanwhile wait behind it, so that neither it nor they are starved.
// Every such wait is bounded: past it the statement is refused as busy (the client retries), never failed.
//
// Only the query API's statements take turns. The events API's pages and health checks are bounded in size and must
// answer at once: they run whenever they come. Writes (the flush's batches, the person mapping) come first: they run
// whenever they come and count as neighbours (a statement short of memory beside a write is not blamed), and a write
// that ran short of memory holds every new turn back while it runs again (duckdb-database.ts).

/** Why a statement was refused or failed, beyond DuckDB's own words (it crosses threads with the message). */
export type StatementFailure = 'busy' | 'short_beside'

export class StatementRefused extends Error {
  constructor(
    message: string,
    readonly failure: StatementFailure,
  ) {
    super(message)
  }
}

/** A statement's turn: it is running while `end` has not been called. */
export interface Turn {
  /** another statement ran beside this one at some time of its run */
  beside: boolean
  readonly alone: boolean
}

interface Waiter {
  alone: boolean
  grant(): void
}

export class StatementTurns {
  private readonly running = new Set<Turn>()
  /** the turn running alone, if any: nothing else starts meanwhile */
  private aloneTurn: Turn | null = null
  /** statements waiting, in the order they came; a waiting alone turn holds back those behind it */
  private readonly line: Waiter[] = []
  /** writes running: neighbours of every statement running meanwhile */
  private writes = 0
  /** writes that hold every new turn back (one run again after it ran short of memory) */
  private holds = 0

  use(): { running: number; waiting: number } {
    return { running: this.running.size, waiting: this.line.length }
  }

  /**
   * A turn for one statement: at once unless a turn alone runs or waits (then behind it); `alone`: once no other
   * statement runs. Waiting longer than `waitMs` is refused (StatementRefused 'busy'); `signal` takes the statement
   * out of the line (rejected with its reason).
   */
  take(alone: boolean, waitMs: number | undefined, signal?: AbortSignal): Promise<Turn> {
    if (signal?.aborted) return Promise.reject(signal.reason)
    if (this.line.length === 0 && this.free(alone)) return Promise.resolve(this.start(alone))
    return new Promise<Turn>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        const at = this.line.indexOf(waiter)
        if (at >= 0) this.line.splice(at, 1)
      }
      const fail = (error: unknown) => {
        leave()
        reject(error)
        this.dispatch() // its place may have held back those behind it
      }
      const waiter: Waiter = {
        alone,
        grant: () => {
          leave()
          resolve(this.start(alone))
        },
      }
      const onAbort = () => fail(signal!.reason)
      const refuse = () => fail(new StatementRefused(`no turn ${alone ? 'alone ' : ''}on the embedded DuckDB store within ${waitMs} ms: it is short of memory`, 'busy'))
      const timer = waitMs === undefined ? undefined : setTimeout(refuse, Math.max(0, waitMs))
      signal?.addEventListener('abort', onAbort, { once: true })
      this.line.push(waiter)
    })
  }

  /** The statement has ended (its memory given back): the next in line may start. */
  end(turn: Turn): void {
    if (!this.running.delete(turn)) return
    if (this.aloneTurn === turn) this.aloneTurn = null
    this.dispatch()
  }

  /** A write starts: the statements running have a neighbour, and so has each one that starts before it ends. */
  writeStarted(): void {
    this.writes++
    for (const other of this.running) other.beside = true
  }

  writeEnded(): void {
    this.writes = Math.max(0, this.writes - 1)
  }

  /** No turn starts until release() (a write that needs the memory); those waiting keep their place and their limit. */
  hold(): void {
    this.holds++
  }

  release(): void {
    this.holds = Math.max(0, this.holds - 1)
    this.dispatch()
  }

  private free(alone: boolean): boolean {
    return this.holds === 0 && this.aloneTurn === null && (!alone || this.running.size === 0)
  }

  private start(alone: boolean): Turn {
    const turn: Turn = { beside: this.running.size > 0 || this.writes > 0, alone }
    for (const other of this.running) other.beside = true
    this.running.add(turn)
    if (alone) this.aloneTurn = turn
    return turn
  }

  /** Start those at the head of the line that may start; an alone turn at the head holds back the rest. */
  private dispatch(): void {
    while (this.line.length > 0 && this.free(this.line[0]!.alone)) this.line[0]!.grant()
  }
}
