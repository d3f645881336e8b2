// The embedded Postgres's own thread: PGlite and the Unix socket that serves it (embedded.ts starts it).
// Why not the capture thread: JavaScriptCore counts PGlite's WebAssembly memory (128 MB reserved, about 30 MB
// touched) as heap and spaces its collections by heap size, so the thread holding it lets 100 MB and more of
// garbage pile up between collections (a JSON.parse loop beside such a memory peaked at 223 MB of RSS instead
// of 48). On the capture thread that garbage was every request's. Here only PGlite's own waits, collected
// every MESSAGES_PER_COLLECTION messages; and the queries' CPU leaves the capture thread.
import { createServer, type Server, type Socket } from 'node:net'
import { chmodSync, rmSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket'
import { ExclusiveQueryQueue } from './pglite-queue'
import { DurableNodeFS, durableStartParams } from './pglite-durable-fs'

declare const self: Worker

/**
 * `initdb`: create the database directory and stop (the thread is then ended: see embedded.ts). `fsync`: commits
 * wait for the disk (pglite-durable-fs.ts); false only where losing the last writes to an OS crash is acceptable.
 */
export type ToPgliteThread =
  | { type: 'initdb'; dataDir: string; fsync: boolean }
  | { type: 'start'; dataDir: string; socketPath: string; fsync: boolean }
  | { type: 'stop' }
  /** a copy of the data directory as it is between two exchanges (a tar file, for backups) */
  | { type: 'dump'; file: string }
/** A failure crosses the thread as its message and the fields boot diagnostics read (code, path, syscall). */
export interface ThreadError {
  message: string
  stack?: string
  code?: string
  path?: string
  syscall?: string
}

export type FromPgliteThread = { type: 'ready' } | { type: 'failed'; error: ThreadError } | { type: 'stopped' } | { type: 'dumped'; bytes: number }

/**
 * Each query leaves about 30 KB of JavaScript garbage in PGlite's glue (buffers, promises, closures): 6 000
 * queries grew the thread by 160 MB. A young-generation collection every so many messages costs about a
 * millisecond and keeps it to a few megabytes.
 */
const MESSAGES_PER_COLLECTION = 200

const send = (message: FromPgliteThread) => self.postMessage(message)

let db: PGlite | undefined
let server: Server | undefined
let queue: ExclusiveQueryQueue | undefined
const handlers = new Set<PGLiteSocketHandler>()

function open(dataDir: string, fsync: boolean): Promise<PGlite> {
  // The metadata database is small: PGlite's default 128 MB of shared buffers would be most of our memory.
  const memory = ['-c', 'shared_buffers=16MB']
  if (!fsync) return PGlite.create(dataDir, { startParams: [...PGlite.defaultStartParams, ...memory] })
  return PGlite.create({ fs: new DurableNodeFS(dataDir), startParams: [...durableStartParams(PGlite.defaultStartParams), ...memory] })
}

async function start(dataDir: string, socketPath: string, fsync: boolean): Promise<void> {
  db = await open(dataDir, fsync)
  let messages = 0
  queue = new ExclusiveQueryQueue(db, () => {
    if (++messages % MESSAGES_PER_COLLECTION === 0) Bun.gc(false)
  })
  server = createServer((socket: Socket) => {
    // The handler only needs enqueue/clearQueueForHandler/clearTransactionIfNeeded from its queue.
    const handler = new PGLiteSocketHandler({ queryQueue: queue as never, closeOnDetach: true })
    handlers.add(handler)
    const forget = () => handlers.delete(handler)
    handler.addEventListener('close', forget)
    handler.addEventListener('error', forget)
    handler.attach(socket).catch(() => socket.destroy())
  })
  const srv = server
  rmSync(socketPath, { force: true })
  await new Promise<void>((ok, fail) => srv.once('error', fail).listen(socketPath, () => ok()))
  chmodSync(socketPath, 0o600)
}

async function stop(): Promise<void> {
  for (const h of handlers) await h.detach(true).catch(() => undefined)
  const srv = server
  if (srv) await new Promise<void>((ok) => srv.close(() => ok()))
  await db?.close().catch(() => undefined)
  server = undefined
  db = undefined
  queue = undefined
}

/** The data directory as a tar, written to `file`, while no connection is in the middle of an exchange. */
async function dump(file: string): Promise<number> {
  const database = db
  if (!database || !queue) throw new Error('the embedded database is not running')
  const tar = await queue.exclusive(() => database.dumpDataDir('none'))
  return Bun.write(file, tar)
}

function threadError(error: unknown): ThreadError {
  const e = error as ThreadError
  return { message: e?.message ?? String(error), stack: e?.stack, code: e?.code, path: e?.path, syscall: e?.syscall }
}

self.onmessage = async (event: MessageEvent<ToPgliteThread>) => {
  const m = event.data
  if (m.type === 'initdb') {
    try {
      db = await open(m.dataDir, m.fsync)
      await stop()
      send({ type: 'stopped' })
    } catch (error) {
      await stop()
      send({ type: 'failed', error: threadError(error) })
    }
  } else if (m.type === 'start') {
    try {
      await start(m.dataDir, m.socketPath, m.fsync)
      send({ type: 'ready' })
    } catch (error) {
      await stop()
      send({ type: 'failed', error: threadError(error) })
    }
  } else if (m.type === 'dump') {
    try {
      send({ type: 'dumped', bytes: await dump(m.file) })
    } catch (error) {
      send({ type: 'failed', error: threadError(error) })
    }
  } else if (m.type === 'stop') {
    await stop()
    send({ type: 'stopped' })
  }
}
