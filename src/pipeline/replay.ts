// A record read back from the log becomes its events again, exactly as capture produced them when it
// acknowledged the request (same decoding, same normalisation, the recorded time of receipt and uuid seed).
import { contextOf, decodeRecord, parseRequest } from '../capture/record'
import { normalizeEvents, type CaptureContext } from '../capture/normalize'
import { isWellFormedText, jsonTextWellFormed } from '../db/text'
import type { LoggedRecord } from './ring'
import type { WalRecord } from './wal'

export function replayRecord(record: WalRecord, maxBytes: number): LoggedRecord {
  const { projectId, request, deep, kind } = decodeRecord(record.payload)
  if (kind === 'recording') {
    // no events: the recording writer decodes the request itself (src/replay/writer.ts)
    return { seq: record.seq, projectId, receivedAt: request.receivedAt, events: [], dropped: new Map(), size: record.size, decodedSize: record.size, recording: request }
  }
  const extracted = parseRequest(request, maxBytes, deep)
  const context = contextOf(request)
  const normalized = normalizeEvents(extracted.items, context, extracted.sentAt, extracted.depth)
  return {
    seq: record.seq,
    projectId,
    receivedAt: request.receivedAt,
    events: normalized.events,
    dropped: normalized.dropped,
    size: record.size,
    decodedSize: extracted.decodedSize,
    wellFormed: jsonTextWellFormed(extracted.text) && contextWellFormed(context),
  }
}

/**
 * Normalisation makes its strings of the parsed JSON, of the request's context ($ip, the library from the user
 * agent) and of its own (names, JSON text, hex): when all of the first two are well formed, so is every string of
 * the events, and the learner need not walk them.
 */
function contextWellFormed(context: CaptureContext): boolean {
  for (const text of [context.ip, context.userAgent, context.sentAtQuery]) if (text !== null && !isWellFormedText(text)) return false
  return true
}
