// One process owns a DATA_DIR at a time (its write-ahead log, its embedded database). The lock is held by the
// kernel, not inferred from a pid in a file: a Unix socket in Linux's abstract namespace, named after the
// directory, which only one process can bind and which vanishes with the process however it ends. A lock file
// left by a crash therefore never blocks a start (not even when its pid was reused, as for PID 1 in a
// container), and a live owner always blocks a second process, which can ask it its pid.
import { createHash } from 'node:crypto'
import { mkdirSync, realpathSync } from 'node:fs'
import { connect, createServer, type Server } from 'node:net'
import { resolve } from 'node:path'

export class DataDirBusy extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number | null,
  ) {
    super(`DATA_DIR ${dataDir} is in use by another live process${pid ? ` (pid ${pid})` : ''}: stop it, or give this one its own DATA_DIR`)
  }
}

function lockName(dataDir: string): string {
  mkdirSync(dataDir, { recursive: true })
  const real = realpathSync(resolve(dataDir))
  return `\0phog-data-dir-${createHash('sha256').update(real).digest('hex').slice(0, 40)}`
}

const held = new Map<string, Server>()

/** Whether this process holds the directory's lock. */
export function holdsDataDir(dataDir: string): boolean {
  return held.has(lockName(dataDir))
}

/** The pid of the live process holding the directory, or null when nobody does. */
export async function dataDirHolder(dataDir: string): Promise<number | null> {
  const name = lockName(dataDir)
  if (held.has(name)) return process.pid
  return new Promise((resolvePid) => {
    const socket = connect(name)
    let text = ''
    socket.setTimeout(2000, () => socket.destroy())
    socket.on('data', (chunk) => (text += chunk))
    socket.on('end', () => resolvePid(Number(text) || 0))
    socket.on('close', () => resolvePid(text ? Number(text) || 0 : 0))
    socket.on('error', () => resolvePid(null)) // nobody listening: not held
  })
}

/** Take the directory for this process; throws DataDirBusy naming the holder. Taking it again is a no-op. */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const name = lockName(dataDir)
  if (held.has(name)) return async () => undefined // the first taker releases it
  {
    const server = createServer((socket) => socket.end(String(process.pid)))
    await new Promise<void>((ok, fail) => {
      server.once('error', fail)
      server.listen(name, () => ok())
    }).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') throw new DataDirBusy(dataDir, await dataDirHolder(dataDir))
      throw error
    })
    server.unref()
    held.set(name, server)
  }
  return async () => {
    const server = held.get(name)
    if (!server) return
    held.delete(name)
    await new Promise<void>((ok) => server.close(() => ok()))
  }
}
