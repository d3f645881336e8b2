// The import's local socket: `npm run cli -- import events` hands its batches to the process that owns DATA_DIR
// through it, so the events enter that process's write-ahead log (one log per DATA_DIR, one writer), and the
// duplicate check asks that process's event store (the only one that may open an embedded store). It lives
// beside the database's and the backup's sockets, in a directory only the service's user can enter, so it needs
// no key. POST /project, /batch, /finish.
import { rmSync } from 'node:fs'
import { assertEventShapes } from '../capture/normalize'
import { privateSocketPath } from '../db/embedded'
import { ApiError, errors } from '../http/errors'
import { UUID_PATTERN } from '../http/fields'
import type { Logger } from '../log'
import type { ImportEvent } from './parse'
import { MAX_BATCH_EVENTS, type BatchAnswer, type ImportService } from './service'

const IMPORT_SOCKET = 'import.sock'
/** A batch's JSON: MAX_BATCH_EVENTS events, most far smaller than capture's 1 MiB cap on one. */
export const MAX_BATCH_REQUEST_BYTES = 16 * 1024 * 1024

export function importSocketPath(dataDir: string): string {
  return privateSocketPath(dataDir, IMPORT_SOCKET)
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } })

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** What the CLI checked, checked again: the socket is private, but what enters the log is held to capture's shapes. */
function checkedBatch(body: unknown): { project: number; events: ImportEvent[] } {
  if (!isObject(body) || !Number.isInteger(body.project) || !Array.isArray(body.events)) throw errors.invalidPayload('Expected {"project": id, "events": [...]}.')
  if (body.events.length > MAX_BATCH_EVENTS) throw errors.invalidPayload(`At most ${MAX_BATCH_EVENTS} events a batch.`)
  assertEventShapes(body.events)
  for (const e of body.events as Record<string, unknown>[]) {
    const ok = typeof e.uuid === 'string' && UUID_PATTERN.test(e.uuid) && typeof e.event === 'string' && e.event !== '' && typeof e.distinct_id === 'string' && e.distinct_id !== '' && typeof e.timestamp === 'string'
    if (!ok) throw errors.invalidPayload('Every event needs a uuid, an event name, a distinct_id and a timestamp.')
  }
  return { project: body.project as number, events: body.events as ImportEvent[] }
}

/** Serve the import socket; the answer stops it. */
export function serveImportControl(dataDir: string, imports: ImportService, log: Logger): () => Promise<void> {
  const path = importSocketPath(dataDir)
  rmSync(path, { force: true })
  const server = Bun.serve({
    unix: path,
    maxRequestBodySize: MAX_BATCH_REQUEST_BYTES,
    async fetch(request) {
      const route = new URL(request.url).pathname
      if (request.method !== 'POST') return json(405, { detail: 'POST only.' })
      try {
        const body = (await request.json().catch(() => null)) as unknown
        if (route === '/project') {
          const choice = isObject(body) ? body : {}
          const project = typeof choice.project === 'number' ? choice.project : undefined
          const token = typeof choice.token === 'string' ? choice.token : undefined
          return json(200, { project: await imports.project({ project, token }) })
        }
        if (route === '/batch') {
          const { project, events } = checkedBatch(body)
          return json(200, await imports.importBatch(project, events))
        }
        if (route === '/finish') {
          const timeoutMs = isObject(body) && typeof body.timeout_ms === 'number' ? Math.min(Math.max(0, body.timeout_ms), 3_600_000) : 60_000
          return json(200, { stored: await imports.finish(timeoutMs) })
        }
        return json(404, { detail: 'Not found.' })
      } catch (error) {
        if (error instanceof ApiError) return json(error.status, error.toBody())
        log.error({ err: error }, 'import request failed')
        return json(500, { detail: (error as Error)?.message ?? String(error) })
      }
    },
  })
  return async () => {
    await server.stop(true)
    rmSync(path, { force: true })
  }
}

/** A refusal the service answered: 429 and 503 are worth retrying (the log is full or the project at its share). */
export class ImportRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    detail: string,
  ) {
    super(detail)
  }

  get retryable(): boolean {
    return this.status === 429 || this.status === 503
  }
}

/** The CLI's side of the socket. */
export class ImportClient {
  constructor(private readonly dataDir: string) {}

  /** Whether a process serves the socket. */
  async reachable(): Promise<boolean> {
    try {
      await this.post('/ping', {})
      return true
    } catch (error) {
      return error instanceof ImportRefused
    }
  }

  async project(choice: { project?: number; token?: string }): Promise<number> {
    return ((await this.post('/project', choice)) as { project: number }).project
  }

  batch(project: number, events: ImportEvent[]): Promise<BatchAnswer> {
    return this.post('/batch', { project, events }) as Promise<BatchAnswer>
  }

  async finish(timeoutMs: number): Promise<boolean> {
    return ((await this.post('/finish', { timeout_ms: timeoutMs })) as { stored: boolean }).stored
  }

  private async post(route: string, body: unknown): Promise<unknown> {
    const response = await fetch(`http://localhost${route}`, {
      unix: importSocketPath(this.dataDir),
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    } as RequestInit)
    const answer = (await response.json().catch(() => null)) as { detail?: string; code?: string } | null
    if (!response.ok) throw new ImportRefused(response.status, answer?.code, answer?.detail ?? `status ${response.status}`)
    return answer
  }
}
