// POST /s/: a session recording request is checked (decoding, key, PostHog's session id rule) on the serving
// thread, then logged as it came (still compressed) in the write-ahead log, as a record of its own kind, and
// acknowledged once durable. The flush worker's recording writer decodes it again and stores it (writer.ts).
// Past a session's or a project's daily byte budget (budget.ts) a request is dropped and answered as PostHog answers
// a quota-limited recording: 200 with quota_limited, so that the client does not send it again and again.
import type { CaptureRequest } from '../capture/record'
import { encodeRecord } from '../capture/record'
import type { EventLog } from '../capture/service'
import { ApiError, errors } from '../http/errors'
import type { Metrics } from '../ops/metrics'
import { costOf, type RecordingBudget } from './budget'
import { parseRecordingRequest, RecordingError, refusalOf } from './decode'

export interface RecordingIngestDeps {
  /** the project a public key (or a personal key with project_id) points at; 401 otherwise */
  projectFor(token: string | null, projectId: unknown, clientAddress: string | null): number | Promise<number>
  log: EventLog
  metrics: Metrics
  /** MAX_RECORDING_BODY_BYTES: the body, and what it decodes to */
  maxBodyBytes: number
  /** RECORDING_MAX_SESSION_BYTES and RECORDING_MAX_PROJECT_DAILY_BYTES */
  budget: RecordingBudget
}

/** What /s/ answers: stored, or dropped past a budget (still a 200: PostHog's quota_limited). */
export interface RecordingIngestResult {
  quotaLimited: boolean
}

const personalKeyRefused = () => errors.validation('invalid_api_key', 'Session recordings take the project API key (phc_…), not a personal key.', 'api_key')

export class RecordingIngest {
  constructor(private readonly deps: RecordingIngestDeps) {}

  async ingest(request: CaptureRequest, clientAddress: string | null): Promise<RecordingIngestResult> {
    try {
      return await this.accept(request, clientAddress)
    } catch (error) {
      if (error instanceof ApiError) this.deps.metrics.recordingsRefused.inc({ code: error.code })
      throw error
    }
  }

  private async accept(request: CaptureRequest, clientAddress: string | null): Promise<RecordingIngestResult> {
    // a key in the query string is checked before the body is decoded: an unknown one costs no decoding
    const queryToken = request.query.get('token') || request.query.get('api_key')
    // the query is logged as it came: a personal key there would be written to disk even beside a project key in the body
    for (const name of ['token', 'api_key']) if (request.query.getAll(name).some((v) => v.startsWith('phx_'))) throw personalKeyRefused()
    if (queryToken) await this.deps.projectFor(queryToken, undefined, clientAddress)
    let parsed: ReturnType<typeof parseRecordingRequest>
    try {
      parsed = parseRecordingRequest(request, this.deps.maxBodyBytes)
    } catch (error) {
      throw error instanceof RecordingError ? refusalOf(error) : error
    }
    // the log keeps the body as it came: a personal key in it would be written to disk (posthog-js never sends one)
    if (parsed.token?.startsWith('phx_')) throw personalKeyRefused()
    const projectId = await this.deps.projectFor(parsed.token, parsed.projectId, clientAddress)
    const cost = costOf(projectId, parsed.decodedSize, parsed.batches)
    const over = this.deps.budget.take(cost)
    if (over) {
      this.deps.metrics.recordingBytesRefused.inc({ reason: over }, parsed.decodedSize)
      return { quotaLimited: true }
    }
    try {
      // no events: a recording counts against the log's cap and the project's share by its bytes alone
      const durable = this.deps.log.accept(encodeRecord(projectId, request, undefined, 'recording'), 0, parsed.decodedSize, projectId)
      if (durable) await durable
    } catch (error) {
      this.deps.budget.giveBack(cost)
      throw error
    }
    let events = 0
    for (const batch of parsed.batches) events += batch.events.length
    this.deps.metrics.recordingEventsReceived.inc(events)
    return { quotaLimited: false }
  }
}
