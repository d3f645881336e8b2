// A /s/ request (posthog-js session recordings) to its snapshot batches: the same decoding as capture (gzip by magic
// bytes whatever the hints, ?compression=gzip-js, base64, form data=, lz64), then PostHog's checks of a recording:
// a $session_id of at most 70 characters of [A-Za-z0-9-], a $window_id (the session id when absent), and
// $snapshot_data on every event. Run twice: on the capture thread before the request is logged (to refuse what the
// store would never take), and in the flush worker when the logged request is read back. The rrweb events are kept
// as they came (a compressed `cv` string stays the same string).
import { wellFormedText } from '../db/text'
import { decodePayload, MAX_JSON_VALUES, scanJson, type RawPayload } from '../http/decode'
import { errors } from '../http/errors'

/** PostHog's capture: a session id longer than this, or of other characters, is refused (400). */
export const MAX_SESSION_ID_CHARS = 70
const SESSION_ID = /^[A-Za-z0-9-]+$/
/** PostHog's capture truncates a recording's distinct id to this. */
export const MAX_DISTINCT_ID_CHARS = 200
/**
 * How deep a recording's JSON may nest: an uncompressed full snapshot nests two levels per DOM level, so far deeper
 * than events may (128); deeper than this is no page anyone built.
 */
export const MAX_RECORDING_DEPTH = 4096
/** $snapshot events in one request (posthog-js sends a handful: one per flushed buffer). */
export const MAX_SNAPSHOT_EVENTS = 10_000
/**
 * JSON values in one request (capture's bound), counted by a scan before it is parsed: 25 MB of `{},` is 8 million
 * objects, 12 s of JSON.parse on the serving thread.
 */
export const MAX_RECORDING_VALUES = MAX_JSON_VALUES
/**
 * rrweb events in one request, all its $snapshot events together. posthog-js flushes its buffer at 0.9 MB, a few
 * thousand events; each stored event costs its line (`["<window id>",…]`, up to 76 bytes more than the event):
 * 8 million `{}` decoded from 24 MB became a 624 MB block, 71 s and 3.9 GB in the flush worker.
 */
export const MAX_RRWEB_EVENTS = 100_000

/** The rrweb events of one $snapshot event, with what says whose they are. */
export interface SnapshotBatch {
  sessionId: string
  windowId: string
  distinctId: string
  /** `web` (posthog-js) or `mobile` */
  source: string
  library: string | null
  /** rrweb `eventWithTime` objects, as sent */
  events: Record<string, unknown>[]
}

export interface ParsedRecording {
  token: string | null
  /** a personal key's project_id, as capture reads it */
  projectId: unknown
  batches: SnapshotBatch[]
  /** characters of decoded JSON */
  decodedSize: number
  encoding: string
}

/** Why a recording was refused: the metric's code and the client's message. */
export type RecordingRefusal = 'invalid_session_id' | 'invalid_window_id' | 'missing_snapshot_data' | 'empty_batch' | 'invalid_payload'

export class RecordingError extends Error {
  constructor(
    readonly code: RecordingRefusal,
    message: string,
    readonly attr: string | null = null,
  ) {
    super(message)
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function stringOf(v: unknown): string | null {
  if (typeof v === 'string') return v
  if (typeof v === 'number' && Number.isFinite(v)) return String(v)
  return null
}

/** PostHog's check of $session_id (and of $window_id, which must pass the same rule when given). */
export function validSessionId(id: unknown): id is string {
  return typeof id === 'string' && id.length > 0 && id.length <= MAX_SESSION_ID_CHARS && SESSION_ID.test(id)
}

/** The events of a request body: an array, one event, or a batch envelope. */
function itemsOf(json: unknown): { items: unknown[]; root: Record<string, unknown> | null } {
  if (Array.isArray(json)) return { items: json, root: null }
  if (isObject(json)) {
    if (Array.isArray(json.batch)) return { items: json.batch, root: json }
    if (Array.isArray(json.data)) return { items: json.data, root: json }
    return { items: [json], root: null }
  }
  throw new RecordingError('invalid_payload', 'Malformed request data: expected a JSON object or array.')
}

function tokenOf(root: Record<string, unknown> | null, first: Record<string, unknown>, form: URLSearchParams | null, query: URLSearchParams): string | null {
  const props = isObject(first.properties) ? first.properties : {}
  for (const v of [root?.api_key, root?.token, first.api_key, first.token, first.$token, props.token, props.api_key, props.$token]) {
    if (typeof v === 'string' && v !== '') return v
  }
  return form?.get('api_key') || form?.get('token') || query.get('token') || query.get('api_key') || null
}

/** One $snapshot event's batch, or the reason it is refused. */
function batchOf(item: unknown, index: number): SnapshotBatch {
  if (!isObject(item)) throw new RecordingError('invalid_payload', `Malformed request data: event ${index} is not an object.`)
  const props = isObject(item.properties) ? item.properties : {}
  const sessionId = props.$session_id
  if (!validSessionId(sessionId)) {
    throw new RecordingError('invalid_session_id', `Invalid $session_id: at most ${MAX_SESSION_ID_CHARS} characters of letters, digits and "-".`, '$session_id')
  }
  const windowId = props.$window_id ?? sessionId
  if (!validSessionId(windowId)) throw new RecordingError('invalid_window_id', `Invalid $window_id: at most ${MAX_SESSION_ID_CHARS} characters of letters, digits and "-".`, '$window_id')
  const data = props.$snapshot_data
  let events: Record<string, unknown>[]
  if (Array.isArray(data)) events = data.filter(isObject)
  else if (isObject(data)) events = [data]
  else throw new RecordingError('missing_snapshot_data', 'Every recording event needs $snapshot_data.', '$snapshot_data')
  // as capture keeps a distinct id: a NUL (or a lone surrogate) becomes U+FFFD; a NUL sent on to Postgres's persons
  // lookup made the recording, and every list page holding it, a 400
  const distinctId = wellFormedText((stringOf(item.distinct_id) ?? stringOf(props.distinct_id) ?? sessionId).slice(0, MAX_DISTINCT_ID_CHARS))
  const source = props.$snapshot_source === 'mobile' ? 'mobile' : 'web'
  const library = typeof props.$lib === 'string' ? wellFormedText(props.$lib.slice(0, 64)) : null
  return { sessionId, windowId, distinctId, source, library, events }
}

/**
 * Decode and check a /s/ request. Throws ApiError 400/413 for what capture refuses anyway (bad encoding, a body
 * decoding past `maxBytes`), RecordingError for what PostHog refuses in a recording.
 */
export function parseRecordingRequest(raw: RawPayload, maxBytes: number): ParsedRecording {
  const decoded = decodePayload(raw, maxBytes)
  const scan = scanJson(decoded.text, MAX_RECORDING_DEPTH, MAX_RECORDING_VALUES)
  if (scan.tooManyValues) throw new RecordingError('invalid_payload', `Malformed request data: more than ${MAX_RECORDING_VALUES} JSON values.`)
  if (scan.deep) throw new RecordingError('invalid_payload', `Malformed request data: nested deeper than ${MAX_RECORDING_DEPTH} levels.`)
  let json: unknown
  try {
    json = JSON.parse(decoded.text)
  } catch (error) {
    throw new RecordingError('invalid_payload', `Malformed request data: ${(error as Error).message}`)
  }
  const { items, root } = itemsOf(json)
  if (items.length === 0) throw new RecordingError('empty_batch', 'The request holds no events.')
  if (items.length > MAX_SNAPSHOT_EVENTS) throw new RecordingError('invalid_payload', `At most ${MAX_SNAPSHOT_EVENTS} events in one request.`)
  const first = isObject(items[0]) ? items[0] : {}
  const batches = items.map(batchOf)
  let rrwebEvents = 0
  for (const b of batches) rrwebEvents += b.events.length
  if (rrwebEvents > MAX_RRWEB_EVENTS) throw new RecordingError('invalid_payload', `At most ${MAX_RRWEB_EVENTS} rrweb events in one request.`, '$snapshot_data')
  const props = isObject(first.properties) ? first.properties : {}
  return {
    token: tokenOf(root, first, decoded.form, raw.query),
    projectId: root?.project_id ?? first.project_id ?? props.project_id,
    batches,
    decodedSize: decoded.text.length,
    encoding: decoded.encoding,
  }
}

/** ApiError of a RecordingError (400, PostHog's answer). */
export function refusalOf(error: RecordingError) {
  return errors.validation(error.code, error.message, error.attr)
}
