// Embedded Postgres: PGlite persisted in DATA_DIR/pg, served in-process over a socket so that postgres.js
// is the one driver. One process owns the data directory at a time (a lock file records who and where
// its socket is), so the CLI can talk to a running server instead of opening the directory twice.
import { createServer, type Server, type Socket } from 'node:net'
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync, openSync, closeSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket'
import { ExclusiveQueryQueue } from './pglite-queue'

export interface EmbeddedPostgres {
  /** postgres.js connection options reaching this instance */
  connection: { path?: string; host?: string; port?: number }
  stop(): Promise<void>
}

interface LockInfo {
  pid: number
  path?: string
  host?: string
  port?: number
}

export class EmbeddedPostgresBusy extends Error {
  constructor(readonly owner: LockInfo) {
    super(`embedded Postgres is held by process ${owner.pid}`)
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export function lockFile(dataDir: string): string {
  return join(resolve(dataDir), 'pg.lock')
}

/** The live owner of the embedded database, if another process holds it. */
export function embeddedOwner(dataDir: string): LockInfo | null {
  const file = lockFile(dataDir)
  if (!existsSync(file)) return null
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as LockInfo
    if (processAlive(info.pid)) return info
  } catch {
    // unreadable lock: treat as stale
  }
  return null
}

function acquireLock(dataDir: string, info: LockInfo): void {
  const file = lockFile(dataDir)
  const owner = embeddedOwner(dataDir)
  if (owner) throw new EmbeddedPostgresBusy(owner)
  rmSync(file, { force: true })
  // O_EXCL: of two processes racing past the liveness check, only one creates the file.
  const fd = openSync(file, 'wx', 0o600)
  try {
    writeFileSync(fd, JSON.stringify(info))
  } finally {
    closeSync(fd)
  }
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  const root = resolve(dataDir)
  mkdirSync(root, { recursive: true, mode: 0o700 })
  const socketPath = join(root, 'pg.sock')
  // Unix socket paths are limited to ~107 bytes; fall back to loopback TCP on a random port.
  const useUnixSocket = Buffer.byteLength(socketPath) < 100
  const owner = embeddedOwner(dataDir)
  if (owner) throw new EmbeddedPostgresBusy(owner)
  acquireLock(dataDir, { pid: process.pid })

  let db: PGlite | undefined
  let server: Server | undefined
  try {
    db = await PGlite.create(join(root, 'pg'), {
      // The metadata database is small: PGlite's default 128 MB of shared buffers would be most of our memory.
      startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'],
    })
    const queue = new ExclusiveQueryQueue(db)
    const handlers = new Set<PGLiteSocketHandler>()
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
    if (useUnixSocket) {
      rmSync(socketPath, { force: true })
      await new Promise<void>((ok, fail) => srv.once('error', fail).listen(socketPath, () => ok()))
    } else {
      await new Promise<void>((ok, fail) => srv.once('error', fail).listen(0, '127.0.0.1', () => ok()))
    }
    const address = srv.address()
    const connection = useUnixSocket
      ? { path: socketPath }
      : { host: '127.0.0.1', port: typeof address === 'object' && address ? address.port : 0 }
    writeFileSync(lockFile(dataDir), JSON.stringify({ pid: process.pid, ...connection }))
    const openDb = db
    return {
      connection,
      async stop() {
        for (const h of handlers) await h.detach(true).catch(() => undefined)
        await new Promise<void>((ok) => srv.close(() => ok()))
        await openDb.close()
        if (useUnixSocket) rmSync(socketPath, { force: true })
        rmSync(lockFile(dataDir), { force: true })
      },
    }
  } catch (error) {
    server?.close()
    await db?.close().catch(() => undefined)
    rmSync(lockFile(dataDir), { force: true })
    throw error
  }
}
