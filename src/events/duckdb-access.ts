// Reaching the process's DuckDB database from any thread. The main thread starts the owner thread
// (duckdb-owner.ts) with its first user and closes it with its last; every thread, the main one included, then
// sends its calls to it: after a hello on the file's channel is welcomed, on a channel of its own.
import { isMainThread } from 'node:worker_threads'
import type { DuckDbAccess, DuckDbSettings, MappingRow, SqlValue, StreamedRows, TurnOptions } from './duckdb-database'
import { clientChannelName, controlChannelName, type Answer, type ControlMessage, type Operation, type OwnerCommand, type OwnerEvent, type Request } from './duckdb-protocol'
import type { StoredEvent } from './store'

/** How long a call waits for the owner's answer before the store is taken for down (the caller retries). */
const CALL_TIMEOUT_MS = 60_000
/** How long a caller says hello before it gives up (the owner may still be opening the file). */
const WELCOME_TIMEOUT_MS = 10_000
const HELLO_EVERY_MS = 100

const OWNER_THREAD = new URL('./duckdb-owner.ts', import.meta.url)

/** The owner threads this process started, by file (main thread only), with how many users each has. */
const owners = new Map<string, { started: Promise<Worker>; users: number }>()

function startOwner(file: string, settings: DuckDbSettings): Promise<Worker> {
  return new Promise<Worker>((resolve, reject) => {
    const worker = new Worker(OWNER_THREAD.href)
    worker.onmessage = (event: MessageEvent<OwnerEvent>) => {
      const m = event.data
      if (m.kind === 'ready') resolve(worker)
      else if (m.kind === 'failed') {
        worker.terminate()
        reject(new Error(m.error))
      }
    }
    // an error outside the owner's handlers ends it: the next user starts another
    worker.onerror = (event: ErrorEvent) => {
      if (owners.get(file)?.started !== undefined) owners.delete(file)
      reject(new Error(`the embedded DuckDB store's thread failed: ${event.message}`))
    }
    worker.postMessage({ kind: 'open', file, settings } satisfies OwnerCommand)
  })
}

function stopOwner(worker: Worker): Promise<void> {
  return new Promise<void>((resolve) => {
    // Not terminated: DuckDB's native work still finishing on the pool's threads (a statement that heard its
    // interrupt late) completes into the thread's environment, and completing into one torn down aborted the whole
    // process ("terminate called after throwing an instance of 'Napi::Error'", about one run in two of an attack
    // test followed by another DuckDB test). Closed and idle, the thread ends by itself; unreferenced, it never
    // holds the process.
    const done = () => {
      clearTimeout(timer)
      worker.unref()
      resolve()
    }
    // a checkpoint folds DuckDB's log into its file; past this, the next start replays the log instead
    const timer = setTimeout(done, 30_000)
    worker.onmessage = (event: MessageEvent<OwnerEvent>) => event.data.kind === 'closed' && done()
    worker.postMessage({ kind: 'close' } satisfies OwnerCommand)
  })
}

/** The owner of `file`, started by its first user on the main thread; the answer is this user's release. */
async function acquireOwner(file: string, settings: DuckDbSettings): Promise<() => Promise<void>> {
  let entry = owners.get(file)
  if (!entry) {
    const started = startOwner(file, settings)
    entry = { started, users: 0 }
    owners.set(file, entry)
    const mine = entry
    started.catch(() => owners.get(file) === mine && owners.delete(file))
  }
  const owner = entry
  owner.users++
  const worker = await owner.started.catch((error) => {
    owner.users--
    throw error
  })
  let released = false
  return async () => {
    if (released) return
    released = true
    if (--owner.users > 0) return
    if (owners.get(file) === owner) owners.delete(file)
    await stopOwner(worker)
  }
}

/** The database from this thread. On the main thread the first user starts the owner thread, the last stops it. */
export async function accessDuckDb(file: string, settings: DuckDbSettings): Promise<DuckDbAccess> {
  const releaseOwner = isMainThread ? await acquireOwner(file, settings) : null
  return new RemoteDuckDb(file, releaseOwner)
}

class RemoteDuckDb implements DuckDbAccess {
  private readonly name = `${process.pid}:${Math.random().toString(36).slice(2)}`
  private channel: BroadcastChannel | undefined
  private welcomed: Promise<BroadcastChannel> | undefined
  private next = 0
  private readonly waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; timer: ReturnType<typeof setTimeout> }>()
  private closed = false

  constructor(
    private readonly file: string,
    private readonly releaseOwner: (() => Promise<void>) | null,
  ) {}

  /** Hello on the file's channel until the owner welcomes this caller (it may still be opening the file). */
  private welcome(): Promise<BroadcastChannel> {
    this.welcomed ??= new Promise<BroadcastChannel>((resolve, reject) => {
      const own = new BroadcastChannel(clientChannelName(this.file, this.name))
      own.onmessage = (event) => this.answered(event.data as Answer)
      const control = new BroadcastChannel(controlChannelName(this.file))
      const hello = () => control.postMessage({ kind: 'hello', from: this.name } satisfies ControlMessage)
      const every = setInterval(hello, HELLO_EVERY_MS)
      const finish = (error?: Error) => {
        clearInterval(every)
        clearTimeout(timer)
        control.close()
        if (error) {
          own.close()
          this.welcomed = undefined
          reject(error)
        } else {
          this.channel = own
          resolve(own)
        }
      }
      const timer = setTimeout(() => finish(new Error(`the embedded DuckDB store did not answer within ${WELCOME_TIMEOUT_MS} ms`)), WELCOME_TIMEOUT_MS)
      control.onmessage = (event) => {
        const m = event.data as ControlMessage
        if (m.kind === 'welcome' && m.to === this.name) finish()
      }
      hello()
    })
    return this.welcomed
  }

  private answered(m: Answer): void {
    const waiter = this.waiting.get(m.id)
    if (!waiter) return
    this.waiting.delete(m.id)
    clearTimeout(waiter.timer)
    if (m.error !== undefined) waiter.reject(Object.assign(new Error(m.error), m.failure ? { failure: m.failure } : {}))
    else waiter.resolve(m.result)
  }

  private async call<T>(op: Operation, args: unknown[], timeoutMs = CALL_TIMEOUT_MS): Promise<T> {
    if (this.closed) throw new Error('embedded store closed')
    const channel = await this.welcome()
    const id = ++this.next
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id)
        reject(new Error(`the embedded DuckDB store did not answer within ${timeoutMs} ms`))
      }, timeoutMs)
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject, timer })
      channel.postMessage({ id, op, args } satisfies Request)
    })
  }

  all(sql: string, params: SqlValue[] = []) {
    return this.call<unknown[][]>('all', [sql, params])
  }
  write(sql: string, params: SqlValue[] = []) {
    return this.call<number>('write', [sql, params])
  }
  insertEvents(rows: StoredEvent[], inDoubt: boolean) {
    return this.call<number>('insertEvents', [rows, inDoubt])
  }
  upsertMapping(rows: MappingRow[]) {
    return this.call<void>('upsertMapping', [rows])
  }
  /** `id` names the statement for interrupt(id); the answer waits as long as the statement may run, and a bit. */
  stream(id: number, sql: string, params: SqlValue[], maxBytes: number, timeoutMs = CALL_TIMEOUT_MS, turn: TurnOptions = {}): Promise<StreamedRows> {
    return this.call<StreamedRows>('stream', [id, sql, params, maxBytes, turn], timeoutMs + 5_000)
  }
  async interrupt(id: number): Promise<void> {
    await this.call<void>('interrupt', [id]).catch(() => undefined)
  }

  async release(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const w of this.waiting.values()) {
      clearTimeout(w.timer)
      w.reject(new Error('embedded store closed'))
    }
    this.waiting.clear()
    this.channel?.close()
    await this.releaseOwner?.()
  }
}
