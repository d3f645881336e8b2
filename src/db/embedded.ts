// Embedded Postgres: PGlite persisted in DATA_DIR/pg, served in-process over a Unix socket so that postgres.js
// is the one driver. The process holding the DATA_DIR lock (data-dir-lock.ts) owns it; a connection file
// (DATA_DIR/pg.lock) tells the CLI and the flush worker where its socket is, so they join it instead of opening
// the directory twice. The database has no password: the socket lives in a directory only this user can enter,
// never on TCP (docs/compatibility.md#embedded-database).
import { createServer, type Server, type Socket } from 'node:net'
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket'
import { DataDirBusy, dataDirHolder, lockDataDir } from './data-dir-lock'
import { ExclusiveQueryQueue } from './pglite-queue'

export interface EmbeddedPostgres {
  /** postgres.js connection options reaching this instance */
  connection: { path: string }
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
  const inDataDir = join(root, 'run', 'pg.sock')
  if (Buffer.byteLength(inDataDir) < MAX_SOCKET_PATH) return join(privateDir(join(root, 'run')), 'pg.sock')
  const tag = createHash('sha256').update(root).digest('hex').slice(0, 16)
  return join(privateDir(join(tmpdir(), `phog-${process.getuid?.() ?? 0}-${tag}`)), 'pg.sock')
}

/** Directories whose database this process serves: a second PGlite on the same files would corrupt them. */
const serving = new Set<string>()

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
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
    rmSync(sockPath, { force: true })
    await new Promise<void>((ok, fail) => srv.once('error', fail).listen(sockPath, () => ok()))
    chmodSync(sockPath, 0o600)
    const connection = { path: sockPath }
    writeFileSync(lockFile(dataDir), JSON.stringify({ pid: process.pid, ...connection } satisfies ConnectionInfo), { mode: 0o600 })
    const openDb = db
    return {
      connection,
      async stop() {
        for (const h of handlers) await h.detach(true).catch(() => undefined)
        await new Promise<void>((ok) => srv.close(() => ok()))
        await openDb.close()
        rmSync(sockPath, { force: true })
        rmSync(lockFile(dataDir), { force: true })
        await release()
      },
    }
  } catch (error) {
    server?.close()
    await db?.close().catch(() => undefined)
    rmSync(lockFile(dataDir), { force: true })
    await release()
    throw error
  }
}
