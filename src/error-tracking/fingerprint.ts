// An `$exception` event's fingerprint and the properties derived from it, PostHog's rules, pure: SHA-512 (hex) over
// each exception's type and message and its frames: the in-app frames only, or, when none is in app, the first frame
// alone; a fingerprint the client sent (`$exception_fingerprint`) wins and is recorded as "manual". phog resolves no
// source maps, so frames are hashed as sent (PostHog's "resolved frames only" rule never applies).
//
// The cost is bounded before anything is hashed or copied: at most MAX_EXCEPTIONS exceptions per event,
// MAX_FRAMES frames looked at per exception, MAX_TEXT characters of any string, and the first MAX_RAW_STACK characters of
// the older flat shape's stack text. A 5 MB stack trace costs what a 64 KB one does.
import { createHash } from 'node:crypto'

/** exceptions of one event looked at (posthog-js appends an error's causes: a handful) */
export const MAX_EXCEPTIONS = 16
/** frames of one exception looked at (browsers keep 10–50) */
export const MAX_FRAMES = 200
/** characters of an exception's type or message hashed or stored in a derived property */
export const MAX_TEXT = 2048
/** characters of the flat shape's `$exception_stack_trace_raw` read */
export const MAX_RAW_STACK = 64 * 1024
/** entries of $exception_sources / $exception_functions */
export const MAX_LISTED = 64
/** a manual fingerprint longer than this is replaced by its SHA-512 (the key of an issue stays bounded) */
export const MAX_MANUAL_FINGERPRINT = 256

export interface Frame {
  function: string | null
  filename: string | null
  lineno: number | null
  colno: number | null
  inApp: boolean
}

export interface ExceptionEntry {
  type: string
  value: string
  handled: boolean | null
  frames: Frame[]
}

export type FingerprintPart =
  | { type: 'exception'; id: number; pieces: string[] }
  | { type: 'frame'; raw_id: string; pieces: string[] }
  | { type: 'manual' }

/** What the flush worker adds to a stored `$exception` event (the issue id is added beside, see issue-ids.ts). */
export interface ExceptionProperties {
  $exception_fingerprint: string
  $exception_proposed_fingerprint: string
  $exception_fingerprint_record: FingerprintPart[]
  $exception_types: string[]
  $exception_values: string[]
  $exception_sources: string[]
  $exception_functions: string[]
  $exception_handled: boolean
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
/** characters of a frame's file or function (URLs and names are shorter) */
export const MAX_FRAME_TEXT = 1024

const text = (v: unknown): string | null => (typeof v === 'string' ? v.slice(0, MAX_TEXT) : typeof v === 'number' && Number.isFinite(v) ? String(v) : null)
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : null)

function frameOf(raw: unknown): Frame | null {
  if (!isObject(raw)) return null
  return {
    function: text(raw.function)?.slice(0, MAX_FRAME_TEXT) ?? null,
    filename: text(raw.filename ?? raw.abs_path ?? raw.source)?.slice(0, MAX_FRAME_TEXT) ?? null,
    lineno: int(raw.lineno),
    colno: int(raw.colno),
    inApp: raw.in_app === true,
  }
}

function framesOf(list: unknown): Frame[] {
  if (!Array.isArray(list)) return []
  const frames: Frame[] = []
  for (let i = 0; i < list.length && i < MAX_FRAMES; i++) {
    const f = frameOf(list[i])
    if (f) frames.push(f)
  }
  return frames
}

// "    at fn (https://x/a.js:1:2)", "    at https://x/a.js:1:2" (V8) and "fn@https://x/a.js:1:2" (Firefox, Safari)
const V8_LINE = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?\s*$/
const GECKO_LINE = /^\s*(.*?)@(.+?):(\d+):(\d+)\s*$/

/** The older flat shape's stack: a JSON list of frames, or a browser's stack text, from its first MAX_RAW_STACK characters. */
function rawStackFrames(raw: unknown): Frame[] {
  if (Array.isArray(raw)) return framesOf(raw)
  if (typeof raw !== 'string') return []
  const head = raw.slice(0, MAX_RAW_STACK)
  if (head.trimStart().startsWith('[') && raw.length <= MAX_RAW_STACK) {
    try {
      return framesOf(JSON.parse(raw))
    } catch {
      return []
    }
  }
  const frames: Frame[] = []
  for (const line of head.split('\n')) {
    if (frames.length >= MAX_FRAMES) break
    const m = V8_LINE.exec(line) ?? GECKO_LINE.exec(line)
    if (!m) continue
    frames.push({ function: m[1] ? m[1].slice(0, MAX_FRAME_TEXT) : null, filename: m[2]!.slice(0, MAX_FRAME_TEXT), lineno: Number(m[3]), colno: Number(m[4]), inApp: true })
  }
  return frames
}

/** The exceptions of an event: `$exception_list` (posthog-js), else the older flat properties made into a list of one. */
export function exceptionsOf(properties: Record<string, unknown>): ExceptionEntry[] {
  const list = properties.$exception_list
  const out: ExceptionEntry[] = []
  if (Array.isArray(list)) {
    for (let i = 0; i < list.length && out.length < MAX_EXCEPTIONS; i++) {
      const e = list[i]
      if (!isObject(e)) continue
      const mechanism = isObject(e.mechanism) ? e.mechanism : {}
      const stack = isObject(e.stacktrace) ? e.stacktrace : {}
      out.push({
        type: text(e.type) ?? 'Error',
        value: text(e.value) ?? '',
        handled: typeof mechanism.handled === 'boolean' ? mechanism.handled : null,
        frames: framesOf(stack.frames),
      })
    }
    if (out.length > 0) return out
  }
  let frames = rawStackFrames(properties.$exception_stack_trace_raw)
  if (frames.length === 0) {
    const source = text(properties.$exception_source)
    if (source !== null) frames = [{ function: null, filename: source, lineno: int(properties.$exception_lineno), colno: int(properties.$exception_colno), inApp: true }]
  }
  const handled = properties.$exception_handled
  return [{
    type: text(properties.$exception_type) ?? 'Error',
    value: text(properties.$exception_message) ?? '',
    handled: typeof handled === 'boolean' ? handled : null,
    frames,
  }]
}

/** The frames that count: the in-app ones, or the first frame alone when none is in app. */
export function countedFrames(frames: Frame[]): Frame[] {
  const inApp = frames.filter((f) => f.inApp)
  return inApp.length > 0 ? inApp : frames.slice(0, 1)
}

const framePieces = (f: Frame): string[] => [f.function ?? '', f.filename ?? '', f.lineno === null ? '' : String(f.lineno), f.colno === null ? '' : String(f.colno)]

const sha512 = (s: string) => createHash('sha512').update(s, 'utf8').digest('hex')

/** The fingerprint PostHog would propose, and its record (what was hashed). */
export function proposedFingerprint(exceptions: ExceptionEntry[]): { fingerprint: string; record: FingerprintPart[] } {
  const record: FingerprintPart[] = []
  // every piece is length-prefixed: ("a", "bc") and ("ab", "c") do not hash alike; hashed in one update (an update
  // a piece made a 3,200-frame event cost a third of a second)
  const parts: string[] = []
  const feed = (s: string) => parts.push(`${s.length}:`, s)
  exceptions.forEach((e, i) => {
    feed(e.type)
    feed(e.value)
    record.push({ type: 'exception', id: i, pieces: ['type', 'message'] })
    for (const f of countedFrames(e.frames)) {
      const pieces = framePieces(f)
      for (const p of pieces) feed(p)
      // (a cheap hash: a SHA-512 per frame made a 3,200-frame event cost 0.9 s)
      record.push({ type: 'frame', raw_id: Bun.hash(pieces.join('\u0000')).toString(16).padStart(16, '0'), pieces: ['function', 'filename', 'lineno', 'colno'] })
    }
  })
  return { fingerprint: createHash('sha512').update(parts.join(''), 'utf8').digest('hex'), record }
}

function manualFingerprint(v: unknown): string | null {
  const s = typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : null
  if (s === null || s.trim() === '') return null
  // too long, holding what Postgres cannot store as text (NUL, a lone surrogate), or what not every store reads back
  // alike from JSON (a backslash, a double quote, a control character: ClickHouse 18.16 did not): its hash instead
  return s.length > MAX_MANUAL_FINGERPRINT || /[\\"\x00-\x1f]/.test(s) || !s.isWellFormed() ? sha512(s.slice(0, MAX_TEXT)) : s
}

function distinct(values: Iterable<string | null>): string[] {
  const seen = new Set<string>()
  for (const v of values) {
    if (v === null || v === '' || seen.has(v)) continue
    seen.add(v)
    if (seen.size >= MAX_LISTED) break
  }
  return [...seen]
}

/** An `$exception` event's fingerprint and derived properties. */
export function fingerprintException(properties: Record<string, unknown>): ExceptionProperties {
  const exceptions = exceptionsOf(properties)
  const proposed = proposedFingerprint(exceptions)
  const manual = manualFingerprint(properties.$exception_fingerprint)
  return {
    $exception_fingerprint: manual ?? proposed.fingerprint,
    $exception_proposed_fingerprint: proposed.fingerprint,
    $exception_fingerprint_record: manual === null ? proposed.record : [{ type: 'manual' }],
    $exception_types: exceptions.map((e) => e.type),
    $exception_values: exceptions.map((e) => e.value),
    $exception_sources: distinct(exceptions.flatMap((e) => e.frames.map((f) => f.filename))),
    $exception_functions: distinct(exceptions.flatMap((e) => e.frames.map((f) => f.function))),
    // handled when every exception says so (an uncaught error's causes may have been handled)
    $exception_handled: exceptions.every((e) => e.handled === true),
  }
}

const ISSUE_NAMESPACE = Buffer.from('6f1c2b0e9a4d4e0b8f3a5c7d2e1f0a9b', 'hex')

/**
 * The issue a new fingerprint makes: a UUID (v5-style, SHA-1 in a namespace of phog's) of the project and the
 * fingerprint, so that the flush worker names it without asking Postgres, and every process names it alike.
 */
export function issueIdOf(teamId: number, fingerprint: string): string {
  const hash = createHash('sha1').update(ISSUE_NAMESPACE).update(`${teamId}:${fingerprint}`, 'utf8').digest()
  hash[6] = (hash[6]! & 0x0f) | 0x50
  hash[8] = (hash[8]! & 0x3f) | 0x80
  const h = hash.subarray(0, 16).toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}
