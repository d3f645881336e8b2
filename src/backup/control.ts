// The backup's local control socket: `npm run cli -- backup` asks the running service through it, so the CLI needs no
// key. It lives beside the embedded database's socket, in a directory only the service's user can enter
// (embedded.ts `privateSocketPath`), and answers one request: POST /backup {"to": DIR}.
import { rmSync } from 'node:fs'
import { privateSocketPath } from '../db/embedded'
import { ApiError } from '../http/errors'
import type { Logger } from '../log'
import type { BackupService } from './service'

const CONTROL_SOCKET = 'control.sock'
/** A path in the request is all it carries. */
const MAX_REQUEST_BYTES = 8192

export function controlSocketPath(dataDir: string): string {
  return privateSocketPath(dataDir, CONTROL_SOCKET)
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

/** Serve the control socket; the answer stops it. */
export function serveBackupControl(dataDir: string, backups: BackupService, log: Logger): () => Promise<void> {
  const path = controlSocketPath(dataDir)
  rmSync(path, { force: true })
  const server = Bun.serve({
    unix: path,
    maxRequestBodySize: MAX_REQUEST_BYTES,
    async fetch(request) {
      if (request.method !== 'POST' || new URL(request.url).pathname !== '/backup') return json(404, { detail: 'Not found.' })
      try {
        const body = (await request.json()) as { to?: unknown }
        if (typeof body?.to !== 'string' || body.to === '' || body.to.length > 4096) return json(400, { detail: '"to" must be a directory path.' })
        const started = performance.now()
        const answer = await backups.run(body.to)
        log.info({ path: answer.path, seconds: (performance.now() - started) / 1000, counts: answer.manifest.counts }, 'backup written (CLI)')
        return json(200, answer)
      } catch (error) {
        if (error instanceof ApiError) return json(error.status, error.toBody())
        log.error({ err: error }, 'backup failed')
        return json(500, { detail: (error as Error)?.message ?? String(error) })
      }
    },
  })
  return async () => {
    await server.stop(true)
    rmSync(path, { force: true })
  }
}

/** The CLI's side: ask the service owning DATA_DIR for a backup. null when it serves no control socket. */
export async function askServiceForBackup(dataDir: string, to: string): Promise<{ status: number; body: unknown } | null> {
  let response: Response
  try {
    response = await fetch('http://localhost/backup', {
      unix: controlSocketPath(dataDir),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to }),
    } as RequestInit)
  } catch {
    return null
  }
  return { status: response.status, body: await response.json().catch(() => null) }
}
