// From a parsed capture payload to the events the pipeline stores. Pure and deterministic: replaying a
// logged request with the same context yields the same events (same uuids, same timestamps).
import { UUID_PATTERN } from '../http/fields'
import { errors } from '../http/errors'
import { MAX_JSON_DEPTH, valueNestingExceeds } from '../http/decode'
import { parseTimestamp } from './timestamp'
import { wellFormedText } from '../db/text'

export interface CaptureContext {
  /** epoch ms when the request arrived */
  receivedAt: number
  /** 16 random bytes drawn per request: the source of server-assigned uuids */
  seed: Uint8Array
  ip: string | null
  /** the query's `_` (client send time in ms, posthog-js) */
  sentAtQuery: string | null
  /** the request came to /engage: nameless events are $identify */
  engage: boolean
  userAgent: string | null
}

export interface CapturedEvent {
  uuid: string
  event: string
  distinctId: string
  properties: Record<string, unknown>
  /** epoch ms, after clock-skew correction */
  timestamp: number
}

export type DropReason =
  | 'no_event_name'
  | 'no_distinct_id'
  | 'empty_distinct_id'
  | 'performance_event'
  | 'recording_event'
  | 'too_deep'
  /** an event whose JSON is over MAX_EVENT_BYTES */
  | 'too_large'
  /** a later event reusing the (project, uuid) of an earlier one (pipeline/recent-uuids.ts) */
  | 'duplicate_uuid'

export interface Normalized {
  events: CapturedEvent[]
  dropped: Map<DropReason, number>
}

export interface ExtractedPayload {
  token: string | null
  /** body project_id: with a personal key, the project to capture into */
  projectId: unknown
  items: unknown[]
  sentAt: unknown
  /** the payload was one event object (not a batch or an array): what is wrong with it refuses the request */
  single: boolean
}

type Json = Record<string, unknown>

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

function nonEmptyString(v: unknown): string | null {
  if (typeof v !== 'string') return null
  const s = v.trim()
  return s.length > 0 ? s : null
}

/** The project key an event or envelope carries (PostHog's places, in its order of preference). */
export function tokenOf(o: Json): string | null {
  return (
    nonEmptyString(o.api_key) ??
    nonEmptyString(o.token) ??
    nonEmptyString(o.$token) ??
    (isObject(o.properties) ? nonEmptyString(o.properties.token) : null)
  )
}

/** Split a payload into its events and the key and send time that cover them. */
export function extractPayload(parsed: unknown, form: URLSearchParams | null, query: URLSearchParams): ExtractedPayload {
  let items: unknown[]
  let token: string | null = null
  let projectId: unknown
  let sentAt: unknown
  let single = false
  if (Array.isArray(parsed)) {
    items = parsed
  } else if (isObject(parsed) && parsed.batch !== undefined && parsed.batch !== null) {
    if (!Array.isArray(parsed.batch)) throw errors.invalidPayload('Invalid payload: "batch" must be an array of events.')
    items = parsed.batch
    token = tokenOf(parsed)
    projectId = parsed.project_id
    sentAt = parsed.sent_at
  } else if (isObject(parsed)) {
    items = [parsed]
    projectId = parsed.project_id
    single = true
  } else {
    throw errors.invalidPayload(`Invalid payload: expected an event, an array of events or a batch, got ${typeOfJson(parsed)}.`)
  }

  if (token === null) {
    const seen = new Set<string>()
    for (const item of items) {
      if (!isObject(item)) continue
      const t = tokenOf(item)
      if (t !== null) seen.add(t)
      if (projectId === undefined && item.project_id !== undefined) projectId = item.project_id
    }
    if (seen.size > 1) throw errors.invalidPayload('Invalid payload: batch submitted with inconsistent api_key values.')
    token = seen.size === 1 ? [...seen][0] : null
  }
  token ??=
    nonEmptyString(form?.get('api_key')) ??
    nonEmptyString(form?.get('token')) ??
    nonEmptyString(query.get('token')) ??
    nonEmptyString(query.get('api_key'))
  return { token, projectId, items, sentAt, single }
}

function typeOfJson(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'an array'
  return `a ${typeof v}`
}

// ---------------------------------------------------------------------------------------------------
// distinct_id

const MAX_DISTINCT_ID = 200

function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`
  if (isObject(v)) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${sortedJson(v[k])}`)
      .join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}

/** A distinct id as text: strings as sent, numbers and booleans as their JSON, objects as sorted JSON. */
function distinctIdText(v: unknown): string | null {
  if (v === undefined || v === null) return null
  let s: string
  if (typeof v === 'string') s = v
  else if (typeof v === 'number' || typeof v === 'boolean') s = JSON.stringify(v) ?? 'null'
  else s = sortedJson(v)
  s = wellFormedText(s)
  if (s.length > MAX_DISTINCT_ID) s = Array.from(s).slice(0, MAX_DISTINCT_ID).join('')
  return s
}

/** The other distinct ids an event names (identify's anonymous id, an alias) are bounded like distinct_id. */
function boundIdentityIds(properties: Json): void {
  for (const key of ['$anon_distinct_id', 'alias'] as const) {
    const v = properties[key]
    if (typeof v === 'string' && (v.length > MAX_DISTINCT_ID || v.includes('\0'))) properties[key] = distinctIdText(v)
  }
}

// ---------------------------------------------------------------------------------------------------
// uuid

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'))

/** ASCII codes of each byte's two hex digits. */
const HEX_CODES = new Uint8Array(512)
for (let i = 0; i < 256; i++) HEX_CODES.set([HEX[i].charCodeAt(0), HEX[i].charCodeAt(1)], i * 2)

/** What the derived uuids of one request share: their text but for the last 8 digits, and the 4 bytes those show. */
interface UuidStem {
  text: Buffer
  tail: Uint8Array
}

/** The time of receipt (UUIDv7's 48-bit milliseconds), the version, the variant and the request's seed. */
function uuidStem(receivedAt: number, seed: Uint8Array): UuidStem {
  const b = new Uint8Array(16)
  let ms = Math.max(0, Math.floor(receivedAt))
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256
    ms = Math.floor(ms / 256)
  }
  b[6] = 0x70 | (seed[0] & 0x0f)
  b[7] = seed[1]
  b[8] = 0x80 | (seed[2] & 0x3f)
  for (let i = 9; i < 16; i++) b[i] = seed[i - 6]
  const h = (i: number) => HEX[b[i]]
  const text = Buffer.from(`${h(0)}${h(1)}${h(2)}${h(3)}-${h(4)}${h(5)}-${h(6)}${h(7)}-${h(8)}${h(9)}-${h(10)}${h(11)}${h(12)}${h(13)}${h(14)}${h(15)}`, 'latin1')
  return { text, tail: b.subarray(12) }
}

/**
 * Event `index`'s uuid: the stem with the index xor-ed into its last 4 bytes, written in place and read as one flat
 * string. (Joined from parts it would be a rope, which costs far more the first time it is read or hashed:
 * pipeline/recent-uuids.ts reads every uuid.)
 */
function uuidOfIndex(stem: UuidStem, index: number): string {
  const { text, tail } = stem
  for (let i = 0; i < 4; i++) {
    const byte = tail[i] ^ ((index >>> (24 - 8 * i)) & 0xff)
    text[28 + 2 * i] = HEX_CODES[byte * 2]
    text[29 + 2 * i] = HEX_CODES[byte * 2 + 1]
  }
  return text.toString('latin1', 0, 36)
}

/** A UUIDv7 for event `index` of a request: time from receipt, the rest from the request's seed. */
export function derivedUuid(receivedAt: number, seed: Uint8Array, index: number): string {
  return uuidOfIndex(uuidStem(receivedAt, seed), index)
}

// ---------------------------------------------------------------------------------------------------
// timestamps (capture-rs rules: skew correction with sent_at, offset wins, future clamped)

const FUTURE_LIMIT_MS = 23 * 60 * 60 * 1000
/**
 * Timestamps every store round-trips: ClickHouse's legacy DateTime starts at 1970 and ends in 2106, Postgres
 * has no year 0, and postgres.js reads years 1–99 back as 19xx. Outside this range a time means the time of
 * receipt, as an unparseable one does.
 */
export const MIN_TIMESTAMP_MS = Date.UTC(1970, 0, 1)
export const MAX_TIMESTAMP_MS = Date.UTC(2100, 0, 1) - 1
/** The earliest time stored: 1970-01-01T00:00:01Z (see eventTimestamp). */
export const FIRST_STORABLE_MS = 1000
const inRange = (ms: number) => Number.isFinite(ms) && ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS
const YEAR_2021 = Date.UTC(2021, 0, 1)

/** The client's send time: the batch's sent_at, else ?_= in milliseconds (ignored before 2021). */
export function resolveSentAt(bodySentAt: unknown, query: string | null): number | null {
  if (bodySentAt !== undefined && bodySentAt !== null) {
    const parsed = parseTimestamp(bodySentAt)
    if (parsed !== null && inRange(parsed)) return parsed
  }
  if (query && /^\d+$/.test(query)) {
    const ms = Number(query)
    if (ms >= YEAR_2021 && ms <= MAX_TIMESTAMP_MS) return ms
  }
  return null
}

function eventTimestamp(e: Json, properties: Json, now: number, sentAt: number | null): number {
  let ts = now
  const client = e.timestamp !== undefined && e.timestamp !== null ? parseTimestamp(e.timestamp) : null
  if (client !== null && inRange(client)) {
    ts = sentAt !== null && properties.$ignore_sent_at !== true ? client - (sentAt - now) : client
  }
  if (typeof e.offset === 'number' && Number.isFinite(e.offset)) ts = now - Math.trunc(e.offset)
  if (ts > now + FUTURE_LIMIT_MS || !inRange(ts)) ts = now
  // ClickHouse 18.16 stores the zero DateTime as 0000-00-00 (read back as 1899): the first second of 1970 is
  // kept as its end, on every store alike
  return ts < FIRST_STORABLE_MS ? FIRST_STORABLE_MS : ts
}

// ---------------------------------------------------------------------------------------------------

/** What makes a payload malformed (400) rather than an event to drop: checked on the request path. */
function assertEventShape(e: unknown): asserts e is Json {
  if (e === null) throw errors.invalidPayload('Invalid payload: some events are null.')
  if (!isObject(e)) throw errors.invalidPayload(`Invalid payload: All events must be dictionaries not ${typeOfJson(e)}!`)
  // a uuid is the event's identity (deduplication): one that is not a UUID is refused, not replaced
  if (e.uuid !== undefined && e.uuid !== null && e.uuid !== '' && !(typeof e.uuid === 'string' && UUID_PATTERN.test(e.uuid))) {
    throw errors.invalidPayload('Invalid payload: Event field "uuid" is not a valid UUID!')
  }
  if (e.properties !== undefined && e.properties !== null && !isObject(e.properties)) {
    throw errors.invalidPayload(`Invalid payload: Properties must be a JSON object, received ${typeOfJson(e.properties)}!`)
  }
}

/**
 * The largest event stored, in bytes of its JSON (PostHog's capture refuses larger ones): one event of many
 * megabytes costs every store, every listing and every reader of it far more than it is worth.
 */
export const MAX_EVENT_BYTES = 1024 * 1024

/** What normalisation must check beyond each event's shape, as the request's text told (see parseRequest). */
export interface EventChecks {
  /** the text nests deeper than the limit somewhere: walk each event */
  check: boolean
  /** the payload was one event: its faults refuse the request */
  single: boolean
  /** the text is longer than MAX_EVENT_BYTES: measure each event */
  large?: boolean
}

const tooDeep = () => errors.invalidPayload(`Invalid payload: the event nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays.`)

/**
 * The request-path checks: every event's shape, a lone event's depth (in a batch a too-deep event is dropped), and
 * every event's size: one over MAX_EVENT_BYTES refuses the whole request with 413 event_too_big, keeping nothing
 * of it (a client told its request was refused must be able to send the rest again without duplicating any:
 * posthog-node halves its batch on a 413 and resends; docs/how-an-event-travels.md).
 */
export function assertEventShapes(items: unknown[], depth: EventChecks = { check: false, single: false }): void {
  for (let i = 0; i < items.length; i++) assertEventShape(items[i])
  if (depth.check && depth.single && valueNestingExceeds(items[0], MAX_JSON_DEPTH)) throw tooDeep()
  if (!depth.large) return
  for (let i = 0; i < items.length; i++) {
    // a too-deep event of a batch is dropped before it is measured (as normalisation does)
    if (depth.check && valueNestingExceeds(items[i], MAX_JSON_DEPTH)) continue
    const bytes = eventBytes(items[i])
    if (bytes > MAX_EVENT_BYTES) {
      const which = items.length === 1 ? 'The event' : `Event ${i + 1} of ${items.length}`
      throw errors.eventTooBig(`${which} is ${bytes} bytes of JSON, over the limit of ${MAX_EVENT_BYTES} bytes per event: the request was refused whole, none of its events was kept.`)
    }
  }
}

/** An event's size as sent, in bytes of its JSON (measured as normalisation measures it). */
function eventBytes(event: unknown): number {
  return Buffer.byteLength(JSON.stringify(event))
}

function bump(dropped: Map<DropReason, number>, reason: DropReason): void {
  dropped.set(reason, (dropped.get(reason) ?? 0) + 1)
}

/**
 * An event's name as every store keeps it: NULs and lone surrogates, which Postgres (the definitions) cannot
 * hold, become U+FFFD in the event store too, so that a name means the same event everywhere.
 */
function eventName(v: unknown): string | null {
  if (typeof v === 'string') return v.length > 0 ? wellFormedText(v) : null
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  return null
}

function libFromUserAgent(ua: string | null): { lib: string; version: string | null } | null {
  if (!ua) return null
  const m = /^(posthog[\w.-]*)\/([\w.+-]+)/i.exec(ua)
  return m ? { lib: m[1], version: m[2] } : null
}

/**
 * Normalise each event. Events without a name or a distinct id are dropped (counted: docs/compatibility.md#dropped-events); a payload
 * whose events are not objects, or whose properties are not an object, is refused with 400.
 */
export function normalizeEvents(
  items: unknown[],
  ctx: CaptureContext,
  bodySentAt: unknown,
  depth: EventChecks = { check: false, single: false },
): Normalized {
  const dropped = new Map<DropReason, number>()
  const events: CapturedEvent[] = []
  const now = ctx.receivedAt
  const sentAt = resolveSentAt(bodySentAt, ctx.sentAtQuery)
  const uaLib = libFromUserAgent(ctx.userAgent)
  let stem: UuidStem | undefined

  for (let index = 0; index < items.length; index++) {
    const e = items[index]
    assertEventShape(e)
    // Only walked when the request's text nests deeper than the limit somewhere (jsonNestingExceeds).
    if (depth.check && valueNestingExceeds(e, MAX_JSON_DEPTH)) {
      if (depth.single) throw tooDeep()
      bump(dropped, 'too_deep')
      continue
    }
    // measured as sent, before normalisation adds anything; only when the request's text could hold such an event
    // (capture refuses such a request; only records logged before it did may hold one)
    if (depth.large && eventBytes(e) > MAX_EVENT_BYTES) {
      bump(dropped, 'too_large')
      continue
    }
    const properties: Json = isObject(e.properties) ? e.properties : {}

    let name = eventName(e.event)
    if (name === null && ctx.engage && (e.event === undefined || e.event === null)) name = '$identify'
    if (name === null) {
      bump(dropped, 'no_event_name')
      continue
    }
    if (name === '$performance_event') {
      bump(dropped, 'performance_event')
      continue
    }
    if (name === '$snapshot' || name === '$snapshot_items') {
      bump(dropped, 'recording_event')
      continue
    }

    const rawId = e.distinct_id ?? e.$distinct_id ?? properties.distinct_id
    const distinctId = distinctIdText(rawId)
    if (distinctId === null) {
      bump(dropped, 'no_distinct_id')
      continue
    }
    if (distinctId.trim().length === 0) {
      bump(dropped, 'empty_distinct_id')
      continue
    }

    // Top-level $set / $set_once join the ones in properties (top level wins), as PostHog's ingestion does.
    for (const key of ['$set', '$set_once'] as const) {
      const top = e[key]
      if (!isObject(top)) continue
      const inner = properties[key]
      properties[key] = isObject(inner) ? { ...inner, ...top } : { ...top }
    }
    boundIdentityIds(properties)
    if (ctx.ip !== null && properties.$ip === undefined) properties.$ip = ctx.ip
    if (properties.$lib === undefined && uaLib) {
      properties.$lib = uaLib.lib
      if (properties.$lib_version === undefined && uaLib.version) properties.$lib_version = uaLib.version
    }

    const uuid = typeof e.uuid === 'string' && UUID_PATTERN.test(e.uuid) ? e.uuid.toLowerCase() : uuidOfIndex((stem ??= uuidStem(now, ctx.seed)), index)
    events.push({ uuid, event: name, distinctId, properties, timestamp: eventTimestamp(e, properties, now, sentAt) })
  }
  return { events, dropped }
}
