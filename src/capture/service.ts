// Capture: decode, find the project, normalise, log. Never sees the HTTP context.
import { errors } from '../http/errors'
import type { PersonalKeyAuth } from '../http/auth'
import type { Metrics } from '../ops/metrics'
import type { Pipeline } from '../pipeline/pipeline'
import type { ProjectTokenCache } from '../projects/token-cache'
import { normalizeEvents } from './normalize'
import { contextOf, encodeRecord, parseRequest, type CaptureRequest } from './record'

export interface CaptureDeps {
  tokens: ProjectTokenCache
  auth: PersonalKeyAuth
  pipeline: Pipeline
  metrics: Metrics
  maxBodyBytes: number
}

export interface CaptureResult {
  accepted: number
  dropped: number
}

export class CaptureService {
  constructor(private readonly deps: CaptureDeps) {}

  /** The project a request's key points at (a project key, or a personal key with project_id). */
  async projectFor(token: string | null, projectId: unknown): Promise<number> {
    if (token === null) throw errors.missingApiKey()
    if (token.startsWith('phx_')) {
      if (projectId === undefined || projectId === null || projectId === '') throw errors.invalidProject()
      const principal = await this.deps.auth.authenticate({ key: token, source: 'body' })
      try {
        return (await this.deps.auth.project(principal, String(projectId))).id
      } catch (error) {
        if ((error as { status?: number }).status === 404) throw errors.invalidProject()
        throw error
      }
    }
    return this.deps.tokens.cached(token) ?? (await this.deps.tokens.resolve(token))
  }

  async capture(request: CaptureRequest): Promise<CaptureResult> {
    const { metrics } = this.deps
    const extracted = parseRequest(request, this.deps.maxBodyBytes)
    const projectId = await this.projectFor(extracted.token, extracted.projectId)
    const { events, dropped } = normalizeEvents(extracted.items, contextOf(request), extracted.sentAt)
    let droppedCount = 0
    for (const [reason, n] of dropped) {
      metrics.events.inc({ outcome: `dropped_${reason}` }, n)
      droppedCount += n
    }
    if (events.length === 0) return { accepted: 0, dropped: droppedCount }
    const durable = this.deps.pipeline.accept(encodeRecord(projectId, request), projectId, request.receivedAt, events)
    if (durable) await durable
    metrics.events.inc({ outcome: 'accepted' }, events.length)
    return { accepted: events.length, dropped: droppedCount }
  }
}
