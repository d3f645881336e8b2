// A record read back from the log becomes its events again, exactly as capture produced them when it
// acknowledged the request (same decoding, same normalisation, the recorded time of receipt and uuid seed).
import { contextOf, decodeRecord, parseRequest } from '../capture/record'
import { normalizeEvents } from '../capture/normalize'
import type { LoggedRecord } from './ring'
import type { WalRecord } from './wal'

export function replayRecord(record: WalRecord, maxBytes: number): LoggedRecord {
  const { projectId, request, deep } = decodeRecord(record.payload)
  const extracted = parseRequest(request, maxBytes, deep)
  const normalized = normalizeEvents(extracted.items, contextOf(request), extracted.sentAt, extracted.depth)
  return {
    seq: record.seq,
    projectId,
    receivedAt: request.receivedAt,
    events: normalized.events,
    dropped: normalized.dropped,
    size: record.size,
    decodedSize: extracted.decodedSize,
  }
}
