// Embedded Postgres: PGlite persisted in DATA_DIR/pg, served by a thread of this process (pglite-thread.ts)
// over a Unix socket so that postgres.js is the one driver. The process holding the DATA_DIR lock (data-dir-lock.ts) owns it; a connection file
// (DATA_DIR/pg.lock) tells the CLI and the flush worker where its socket is, so they join it instead of opening
// the directory twice. The database has no password: the socket lives in a directory only this user can enter,
// never on TCP (docs/compatibility.md#embedded-database).
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { syncTree } from '../lib/fsync'
import { DataDirBusy, dataDirHolder, lockDataDir } from './data-dir-lock'
import type { FromPgliteThread, ToPgliteThread } from './pglite-thread'

export interface EmbeddedPostgres {
  /** postgres.js connection options reaching this instance */
  connection: { path: string }
  /** write a tar of the database directory to `file` (a consistent state: see pglite-queue.ts `exclusive`); its size */
  dump(file: string): Promise<number>
  stop(): Promise<void>
}

interface ConnectionInfo {
  pid: number
  path: string
}

export function lockFile(dataDir: string): string {
  return join(resolve(dataDir), 'pg.lock')
}

/** The running server's embedded database, if a live process holds this DATA_DIR and serves one. */
export async function embeddedOwner(dataDir: string): Promise<ConnectionInfo | null> {
  const holder = await dataDirHolder(dataDir)
  if (holder === null || !existsSync(lockFile(dataDir))) return null
  try {
    const info = JSON.parse(readFileSync(lockFile(dataDir), 'utf8')) as ConnectionInfo
    return typeof info.path === 'string' ? info : null
  } catch {
    return null
  }
}

// Unix socket paths are limited to 107 bytes.
const MAX_SOCKET_PATH = 100

/** A directory only this user can enter: created 0700, and refused if someone else owns it or it is a link. */
function privateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const stat = lstatSync(dir)
  const uid = process.getuid?.() ?? stat.uid
  if (!stat.isDirectory() || stat.uid !== uid) throw new Error(`${dir} is not a directory owned by this user: refusing to put the database socket there`)
  chmodSync(dir, 0o700)
  return dir
}

/** Where the socket goes: DATA_DIR/run, or a private directory under the temp dir when that path is too long. */
function socketPath(root: string): string {
  return privateSocketPath(root, 'pg.sock')
}

/** A Unix socket `name` only this user can reach, for the process owning DATA_DIR (the database, the backup control). */
export function privateSocketPath(dataDir: string, name: string): string {
  const root = resolve(dataDir)
  const inDataDir = join(root, 'run', name)
  if (Buffer.byteLength(inDataDir) < MAX_SOCKET_PATH) return join(privateDir(join(root, 'run')), name)
  const tag = createHash('sha256').update(root).digest('hex').slice(0, 16)
  return join(privateDir(join(tmpdir(), `phog-${process.getuid?.() ?? 0}-${tag}`)), name)
}

/** Directories whose database this process serves: a second PGlite on the same files would corrupt them. */
const serving = new Set<string>()

export async function startEmbeddedPostgres(dataDir: string, options: { fsync?: boolean } = {}): Promise<EmbeddedPostgres> {
  const fsync = options.fsync ?? true
  const root = resolve(dataDir)
  mkdirSync(root, { recursive: true, mode: 0o700 })
  if (serving.has(root)) throw new DataDirBusy(dataDir, process.pid)
  const unlock = await lockDataDir(root)
  serving.add(root)
  const release = async () => {
    serving.delete(root)
    await unlock()
  }
  const sockPath = socketPath(root)

  const thread = new PgliteThread()
  try {
    const pgDir = join(root, 'pg')
    // initdb leaves ≈ 190 MB of WebAssembly memory that a timer of its own keeps alive for seconds after it ends:
    // it runs in a thread of its own, which is ended (and its memory with it) before the serving thread starts.
    if (!existsSync(join(pgDir, 'PG_VERSION'))) {
      await new PgliteThread().initdb(pgDir, fsync)
      // initdb writes without syncing: the new cluster reaches the disk once, before anything is stored in it
      if (fsync) syncTree(pgDir)
    }
    await thread.start(pgDir, sockPath, fsync)
    const connection = { path: sockPath }
    writeFileSync(lockFile(dataDir), JSON.stringify({ pid: process.pid, ...connection } satisfies ConnectionInfo), { mode: 0o600 })
    return {
      connection,
      dump: (file) => thread.dump(file),
      async stop() {
        await thread.stop()
        rmSync(sockPath, { force: true })
        rmSync(lockFile(dataDir), { force: true })
        await release()
      },
    }
  } catch (error) {
    await thread.stop()
    rmSync(lockFile(dataDir), { force: true })
    await release()
    throw error
  }
}

const PGLITE_THREAD = new URL('./pglite-thread.ts', import.meta.url)


function throwIfFailed(answer: FromPgliteThread): void {
  if (answer.type !== 'failed') return
  const { message, stack, ...fields } = answer.error
  throw Object.assign(new Error(message), fields, stack ? { stack } : {})
}

/** The worker thread that runs PGlite and serves its socket (pglite-thread.ts says why it is a thread). */
class PgliteThread {
  private worker: Worker | undefined
  private waiting: ((message: FromPgliteThread) => void) | undefined
  private exited = false

  /** Create the database directory in this thread, then end it. */
  async initdb(dataDir: string, fsync: boolean): Promise<void> {
    this.spawn()
    const answer = await this.ask({ type: 'initdb', dataDir, fsync })
    this.worker?.terminate()
    this.worker = undefined
    throwIfFailed(answer)
  }

  /** Resolves once the socket accepts connections; rejects with the thread's error. */
  async start(dataDir: string, socketPath: string, fsync: boolean): Promise<void> {
    this.spawn()
    throwIfFailed(await this.ask({ type: 'start', dataDir, socketPath, fsync }))
  }

  /** One dump at a time (the caller's: backups are one at a time); its answer is the tar's size. */
  async dump(file: string): Promise<number> {
    if (!this.worker || this.exited) throw new Error('the embedded database is not running')
    const answer = await this.ask({ type: 'dump', file })
    throwIfFailed(answer)
    return answer.type === 'dumped' ? answer.bytes : 0
  }

  private spawn(): void {
    const worker = new Worker(PGLITE_THREAD.href)
    this.worker = worker
    worker.onmessage = (event: MessageEvent<FromPgliteThread>) => this.waiting?.(event.data)
    // An error thrown outside the thread's handlers (it should not happen) ends it: tell whoever waits.
    worker.onerror = (event: ErrorEvent) => this.waiting?.({ type: 'failed', error: { message: event.message } })
    worker.addEventListener('close', () => {
      this.exited = true
      this.waiting?.({ type: 'failed', error: { message: 'the embedded database thread exited' } })
    })
  }

  async stop(): Promise<void> {
    const worker = this.worker
    if (!worker) return
    this.worker = undefined
    if (!this.exited) await this.ask({ type: 'stop' }, worker)
    worker.terminate()
  }

  private ask(message: ToPgliteThread, worker = this.worker!): Promise<FromPgliteThread> {
    return new Promise((resolve) => {
      this.waiting = (answer) => {
        this.waiting = undefined
        resolve(answer)
      }
      worker.postMessage(message)
    })
  }
}
