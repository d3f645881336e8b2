// Capture: decode, find the project, normalise, log. Never sees the HTTP context.
import { expansionCap } from '../http/decode'
import { ApiError, errors } from '../http/errors'
import type { PersonalKeyAuth } from '../projects/auth'
import type { Metrics } from '../ops/metrics'
import { projectOfPublicKey } from '../projects/public-key'
import type { ProjectTokenCache } from '../projects/token-cache'
import type { DecodeBudget } from './decode-budget'
import { assertEventShapes } from './normalize'
import { encodeRecord, parseRequest, withoutCredential, type CaptureRequest } from './record'

export interface CaptureDeps {
  tokens: ProjectTokenCache
  auth: PersonalKeyAuth
  log: EventLog
  metrics: Metrics
  maxBodyBytes: number
  /** decoded bytes of refused bodies per second per client address (none: unbounded) */
  decodeBudget?: DecodeBudget
}

/**
 * Where accepted requests go (the write-ahead log, pipeline/capture-log.ts): capture answers 200 once accept()
 * returned and its promise, if any, resolved. Defined here so that capture does not depend on the pipeline.
 */
export interface EventLog {
  /**
   * `decodedBytes`: what the request decodes to (counted against the log's cap when larger than it is on disk);
   * `projectId`: whose share of the log the record counts against (429 past it)
   */
  accept(parts: Uint8Array[], items: number, decodedBytes: number, projectId: number): Promise<void> | null
}

export class CaptureService {
  constructor(private readonly deps: CaptureDeps) {}

  /**
   * Decode, unless the address has spent its budget of decoding refused bodies (429 before anything is decoded).
   * A body refused while decoding is charged what it may have expanded to.
   */
  private decode(request: CaptureRequest, address: string | null): ReturnType<typeof parseRequest> {
    const budget = this.deps.decodeBudget
    if (!budget || address === null) return parseRequest(request, this.deps.maxBodyBytes)
    const wait = budget.waitSeconds(address)
    if (wait > 0) {
      this.deps.metrics.requestsRejected.inc({ code: 'decode_budget' })
      throw errors.rateLimited(`This address sent too many refused bodies to decode. Please retry in ${wait} second${wait === 1 ? '' : 's'}.`, wait)
    }
    try {
      return parseRequest(request, this.deps.maxBodyBytes)
    } catch (error) {
      const wire = request.body.length > 0 ? request.body.length : (request.query.get('data')?.length ?? 0)
      budget.charge(address, expansionCap(wire, this.deps.maxBodyBytes))
      throw error
    }
  }

  /** The project a request's key points at (a project key, or a personal key with project_id). */
  projectFor(token: string | null, projectId: unknown, clientAddress: string | null = null): number | Promise<number> {
    if (token === null) throw errors.missingApiKey()
    return projectOfPublicKey(this.deps, token, projectId, clientAddress)
  }

  /**
   * Check the request (decoding, key, shape) and log it. Normalisation, and the drops (docs/compatibility.md#dropped-events), happen
   * in the flush worker from the logged request, exactly as they would on a replay: nothing in the answer
   * depends on them.
   */
  async capture(request: CaptureRequest, endpoint = 'capture', clientAddress: string | null = request.ip): Promise<void> {
    // a project key in the query string is checked before the body is decoded: an unknown one costs no decoding
    const queryToken = request.query.get('token') || request.query.get('api_key')
    if (queryToken && !queryToken.startsWith('phx_')) await this.projectFor(queryToken, undefined, clientAddress)
    // no address (a request handled in process, not over a socket): nobody to charge
    let extracted: ReturnType<typeof parseRequest>
    try {
      extracted = this.decode(request, clientAddress)
    } catch (error) {
      this.countTooLarge(error)
      throw error
    }
    this.deps.metrics.captureRequestTallies.of(`${extracted.encoding} ${extracted.via}`, { encoding: extracted.encoding, via: extracted.via }).inc()
    try {
      await this.log(request, extracted, endpoint, clientAddress)
    } catch (error) {
      // decoding that bought nothing (an unknown key, a bad shape, a project over its share) counts against the address
      if (clientAddress !== null && error instanceof ApiError && error.status < 500) this.deps.decodeBudget?.charge(clientAddress, extracted.decodedSize)
      this.countTooLarge(error)
      throw error
    }
  }

  /** 413s (payload_too_large, event_too_big) counted by code: a client told its events were refused, not kept */
  private countTooLarge(error: unknown): void {
    if (error instanceof ApiError && error.status === 413) this.deps.metrics.requestsRejected.inc({ code: error.code })
  }

  private async log(request: CaptureRequest, extracted: ReturnType<typeof parseRequest>, endpoint: string, clientAddress: string | null): Promise<void> {
    const project = this.projectFor(extracted.token, extracted.projectId, clientAddress)
    const projectId = typeof project === 'number' ? project : await project
    assertEventShapes(extracted.items, extracted.depth)
    if (extracted.items.length === 0) return
    const logged = extracted.token?.startsWith('phx_') ? withoutCredential(request, extracted.text, extracted.token) : request
    // kept decoded, the body must still be one the consumers will read back (invalid UTF-8 grows when re-encoded)
    if (logged !== request && logged.body.length > this.deps.maxBodyBytes) throw errors.tooLarge()
    const durable = this.deps.log.accept(encodeRecord(projectId, logged, extracted.depth.check), extracted.items.length, extracted.decodedSize, projectId)
    if (durable) await durable
    // counted once acknowledged, whatever the stores do next (what they stored or dropped is counted apart)
    this.deps.metrics.eventsReceivedTallies.of(endpoint, { endpoint }).inc(extracted.items.length)
  }
}
