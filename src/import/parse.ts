// One record of a PostHog export → the event capture would take, or the reason it is refused. The checks are
// capture's (src/capture/normalize.ts) made strict for history: what capture would silently drop or re-time is
// refused here with a reason, so that the summary accounts for every line.
import { createHash } from 'node:crypto'
import { jsonNestingExceeds, MAX_JSON_DEPTH } from '../http/decode'
import { UUID_PATTERN } from '../http/fields'
import { MAX_EVENT_BYTES, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS } from '../capture/normalize'
import { parseTimestamp } from '../capture/timestamp'
import { csvFields } from './reader'

/** Why a line is not imported (the summary counts each). */
export type RefusalReason =
  | 'too_long'
  | 'invalid_json'
  | 'not_an_object'
  | 'too_deep'
  | 'no_event_name'
  | 'no_distinct_id'
  | 'invalid_uuid'
  | 'invalid_properties'
  | 'invalid_timestamp'
  | 'timestamp_in_future'
  | 'recording_event'
  | 'wrong_column_count'

/** An event as the import sends it into the log: a /batch/ item whose uuid and timestamp are always set. */
export interface ImportEvent {
  uuid: string
  event: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
  $set?: Record<string, unknown>
  $set_once?: Record<string, unknown>
}

export type Parsed = { event: ImportEvent } | { refused: RefusalReason }

/** The longest record read: capture's cap on one event's JSON, and room for CSV's quoting of it. */
export const MAX_RECORD_BYTES = MAX_EVENT_BYTES + 64 * 1024
/** Capture treats a time more than this ahead of its clock as wrong (and stores its receipt instead). */
const FUTURE_LIMIT_MS = 23 * 60 * 60 * 1000

type Json = Record<string, unknown>
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * A uuid for an exported event that has none: derived from its text (a v5-shaped hash), so importing the same
 * file again finds it a duplicate.
 */
export function uuidOfText(text: string): string {
  const h = createHash('sha1').update('phog-import:').update(text).digest()
  h[6] = (h[6] & 0x0f) | 0x50
  h[8] = (h[8] & 0x3f) | 0x80
  const x = h.subarray(0, 16).toString('hex')
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`
}

/** The checks and the shape, from a row already read into fields (JSON lines and CSV alike). */
export function eventOf(row: Json, text: string, now = Date.now()): Parsed {
  const name = typeof row.event === 'string' ? row.event : typeof row.event === 'number' ? String(row.event) : ''
  if (name.trim() === '') return { refused: 'no_event_name' }
  if (name === '$snapshot' || name === '$snapshot_items' || name === '$performance_event') return { refused: 'recording_event' }
  const rawId = row.distinct_id ?? row.$distinct_id
  const distinctId = typeof rawId === 'string' ? rawId : typeof rawId === 'number' || typeof rawId === 'boolean' ? JSON.stringify(rawId) : ''
  if (distinctId.trim() === '') return { refused: 'no_distinct_id' }
  let uuid: string
  if (row.uuid === undefined || row.uuid === null || row.uuid === '') uuid = uuidOfText(text)
  else if (typeof row.uuid === 'string' && UUID_PATTERN.test(row.uuid)) uuid = row.uuid.toLowerCase()
  else return { refused: 'invalid_uuid' }
  let properties: unknown = row.properties ?? {}
  // ClickHouse rows (and CSV) carry properties as JSON text
  if (typeof properties === 'string') {
    try {
      properties = properties.trim() === '' ? {} : JSON.parse(properties)
    } catch {
      return { refused: 'invalid_properties' }
    }
  }
  if (!isObject(properties)) return { refused: 'invalid_properties' }
  const ms = typeof row.timestamp === 'string' || typeof row.timestamp === 'number' ? parseTimestamp(row.timestamp) : null
  if (ms === null || ms < MIN_TIMESTAMP_MS || ms > MAX_TIMESTAMP_MS) return { refused: 'invalid_timestamp' }
  if (ms > now + FUTURE_LIMIT_MS) return { refused: 'timestamp_in_future' }
  const chain = row.elements_chain
  if (typeof chain === 'string' && chain !== '' && properties.$elements_chain === undefined) properties.$elements_chain = chain
  const event: ImportEvent = { uuid, event: name, distinct_id: distinctId, timestamp: new Date(ms).toISOString(), properties }
  for (const key of ['$set', '$set_once'] as const) {
    let value = row[key]
    if (typeof value === 'string' && value.trim().startsWith('{')) value = safeJson(value)
    if (isObject(value)) event[key] = value
  }
  return { event }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** One JSON line of PostHog's event export. */
export function parseJsonLine(text: string, now?: number): Parsed {
  if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) return { refused: 'too_deep' }
  let row: unknown
  try {
    row = JSON.parse(text)
  } catch {
    return { refused: 'invalid_json' }
  }
  if (!isObject(row)) return { refused: 'not_an_object' }
  return eventOf(row, text, now)
}

/**
 * The columns of PostHog's CSV export of events. The events table's export names the event's own fields `*.uuid`,
 * `*.event`, …, and may flatten properties into `*.properties.$browser` columns; other exports name them plainly
 * (`uuid`, `event`, `properties` as JSON text). Columns about the person (`person`, `person.*`) and computed ones
 * (`Url / Screen`) are not the event's and are ignored.
 */
export interface CsvColumns {
  /** column index → the event field it holds (`properties` included) */
  fields: Map<number, string>
  /** column index → a property flattened into its own column */
  properties: Map<number, string>
  count: number
}

const EVENT_FIELDS = new Set(['uuid', 'event', 'distinct_id', 'timestamp', 'properties', 'elements_chain', '$set', '$set_once'])

export function csvColumns(header: string): CsvColumns {
  const names = csvFields(header.replace(/^\uFEFF/, ''))
  const fields = new Map<number, string>()
  const properties = new Map<number, string>()
  const taken = new Set<string>()
  // the `*.`-prefixed columns are the event's own: they win over a plain column of the same name
  const order = names.map((n, i) => ({ n: n.trim(), i })).sort((a, b) => Number(b.n.startsWith('*.')) - Number(a.n.startsWith('*.')))
  for (const { n, i } of order) {
    const name = n.startsWith('*.') ? n.slice(2) : n
    if (EVENT_FIELDS.has(name) && !taken.has(name)) {
      fields.set(i, name)
      taken.add(name)
    } else if (name.startsWith('properties.') && name.length > 'properties.'.length) properties.set(i, name.slice('properties.'.length))
  }
  return { fields, properties, count: names.length }
}

/** Whether the header names what an event needs. */
export function csvColumnsProblem(columns: CsvColumns): string | null {
  const have = new Set(columns.fields.values())
  const missing = ['event', 'distinct_id', 'timestamp'].filter((f) => !have.has(f))
  return missing.length ? `the CSV header lacks the column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} (PostHog's export names them event or *.event, …)` : null
}

/** A flattened property's text as its value: numbers, booleans and JSON values as such, the rest as text. */
function cellValue(text: string): unknown {
  if (text === '') return undefined
  if (text === 'true' || text === 'false' || text === 'null' || /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text) || /^[[{]/.test(text)) {
    const v = safeJson(text)
    if (v !== undefined) return v
  }
  return text
}

/** One CSV row of PostHog's export. */
export function parseCsvRow(text: string, columns: CsvColumns, now?: number): Parsed {
  const cells = csvFields(text)
  if (cells.length !== columns.count) return { refused: 'wrong_column_count' }
  const row: Json = {}
  for (const [i, field] of columns.fields) row[field] = cells[i]
  if (columns.properties.size > 0) {
    let properties: unknown = row.properties === undefined || row.properties === '' ? {} : safeJson(String(row.properties))
    if (!isObject(properties)) return { refused: 'invalid_properties' }
    for (const [i, key] of columns.properties) {
      const v = cellValue(cells[i])
      if (v !== undefined && properties[key] === undefined) properties[key] = v
    }
    row.properties = properties
  }
  if (typeof row.properties === 'string' && jsonNestingExceeds(row.properties, MAX_JSON_DEPTH)) return { refused: 'too_deep' }
  return eventOf(row, text, now)
}
