// What boot checks before it changes anything, how it waits for a database that starts after it, and how a
// failed boot is told to an operator: one line in words naming the cause and what to change.
import { accessSync, constants, mkdirSync } from 'node:fs'
import { createServer } from 'node:net'
import type { Sql } from 'postgres'
import type { Config } from '../config'
import { isConnectionError } from '../db/postgres'
import type { Logger } from '../log'

/** A boot failure already explained in words. */
export class BootError extends Error {}

/** The port must be free before migrations run: failing after them left a half-started node behind. */
export async function assertPortFree(config: Config): Promise<void> {
  if (config.REUSE_PORT || config.PORT === 0) return // sharing the port is the point
  await new Promise<void>((resolve, reject) => {
    const probe = createServer()
    probe.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') {
        reject(new BootError(`PORT ${config.PORT} on HOST ${config.HOST} is already in use: stop the other process, or set another PORT`))
      } else if (error.code === 'EACCES') {
        reject(new BootError(`PORT ${config.PORT} needs privileges this process does not have: set a PORT above 1023`))
      } else reject(error)
    })
    probe.listen({ port: config.PORT, host: config.HOST, exclusive: true }, () => probe.close(() => resolve()))
  })
}

export function assertDataDirWritable(config: Config): void {
  try {
    mkdirSync(config.DATA_DIR, { recursive: true })
    accessSync(config.DATA_DIR, constants.W_OK)
  } catch (error) {
    throw new BootError(`DATA_DIR ${config.DATA_DIR} is not writable (${(error as NodeJS.ErrnoException).code ?? 'error'}): fix its permissions or set another DATA_DIR`, { cause: error })
  }
}

/**
 * Wait for Postgres to accept a query, for up to BOOT_WAIT_MS: under compose or Kubernetes the database often
 * starts a few seconds after the service. One warning per attempt; what is not a connection problem (a wrong
 * password, a missing database) fails at once.
 */
export async function waitForPostgres(sql: Sql, config: Config, log: Logger): Promise<void> {
  const deadline = Date.now() + config.BOOT_WAIT_MS
  let delay = 250
  for (let attempt = 1; ; attempt++) {
    try {
      await sql`select 1`
      return
    } catch (error) {
      if (!isConnectionError(error) || Date.now() + delay > deadline) throw error
      log.warn({ err: error, attempt, retryInMs: delay }, 'Postgres (DATABASE_URL) is not reachable yet; retrying')
      await Bun.sleep(delay)
      delay = Math.min(5000, delay * 2)
    }
  }
}

function hostOf(url: string | undefined): string {
  try {
    const u = new URL(url ?? '')
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`
  } catch {
    return 'the configured address'
  }
}

/** A failed boot, in words: what went wrong and which setting to change. */
export function describeBootFailure(error: unknown, config: Config): string {
  if (error instanceof BootError) return error.message
  const e = error as { code?: string; message?: string; syscall?: string; path?: string }
  const message = e?.message ?? String(error)
  if (config.DATABASE_URL) {
    const where = hostOf(config.DATABASE_URL)
    if (e?.code === '3D000') return `DATABASE_URL names a database that does not exist (${where}): create it, or fix the URL (${message})`
    if (e?.code === '28P01' || e?.code === '28000') return `DATABASE_URL was refused by Postgres at ${where}: check the user and password (${message})`
    if (isConnectionError(error)) return `DATABASE_URL is unreachable (${where}) after BOOT_WAIT_MS=${config.BOOT_WAIT_MS}: is Postgres running and reachable from here? (${message})`
  }
  if (e?.code === 'EADDRINUSE') return `PORT ${config.PORT} on HOST ${config.HOST} is already in use: stop the other process, or set another PORT`
  if ((e?.code === 'EACCES' || e?.code === 'EROFS') && e.path) return `${e.path} is not writable (DATA_DIR=${config.DATA_DIR}): fix its permissions or set another DATA_DIR`
  return message
}
