// Error tracking's shapes, read leniently (the issues API's figures flat or under `aggregations`, as PostHog's
// ErrorTrackingIssue has them), and an exception's stack as frames: posthog-js's `$exception_list` (raw frames, or
// frames resolved by a source map) and the older flat `$exception_type` / `$exception_message` properties.

export type IssueStatus = 'active' | 'resolved' | 'suppressed'

export const STATUS_TEXT: Record<string, string> = { active: 'Active', resolved: 'Resolved', suppressed: 'Suppressed', archived: 'Archived', pending_release: 'Pending release' }

/** The date ranges the pages offer, as the issues API takes them (`date_from`). */
export const RANGES = [
  ['-24h', 'Last 24 hours'],
  ['-7d', 'Last 7 days'],
  ['-14d', 'Last 14 days'],
  ['-30d', 'Last 30 days'],
  ['-90d', 'Last 90 days'],
] as const

/** A range from a link (`?date_from=`), the default when it is not one of them. */
export function rangeOf(value: string | null | undefined): string {
  return RANGES.some(([r]) => r === value) ? value! : '-7d'
}

export interface Issue {
  id: string
  name: string
  description: string
  status: string
  first_seen: string | null
  last_seen: string | null
  occurrences: number
  users: number
  sessions: number
  /** occurrences per day, oldest first */
  volume: number[]
}

function count(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN
  return Number.isFinite(n) && n >= 0 ? n : 0
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value)
}

/** A day's figure: a number, or {value|count|occurrences} as buckets are written. */
function bucketValue(bucket: unknown): number {
  if (bucket && typeof bucket === 'object') {
    const b = bucket as Record<string, unknown>
    return count(b.value ?? b.count ?? b.occurrences)
  }
  return count(bucket)
}

/** The per-day volume wherever the answer puts it. */
export function volumeOf(raw: Record<string, any>): number[] {
  const aggregations = (raw.aggregations ?? {}) as Record<string, unknown>
  const candidates = [raw.volume, raw.volume_per_day, raw.volumeDay, aggregations.volume_buckets, aggregations.volumeRange, aggregations.volumeDay, aggregations.volume]
  const found = candidates.find((c) => Array.isArray(c)) as unknown[] | undefined
  // bounded: a year of days at most
  return (found ?? []).slice(-366).map(bucketValue)
}

export function issueOf(raw: Record<string, any>): Issue {
  const aggregations = (raw.aggregations ?? {}) as Record<string, unknown>
  const figure = (name: string) => count(raw[name] ?? aggregations[name])
  return {
    id: text(raw.id),
    name: text(raw.name) || 'Unnamed error',
    description: text(raw.description),
    status: text(raw.status) || 'active',
    first_seen: typeof raw.first_seen === 'string' ? raw.first_seen : null,
    last_seen: typeof raw.last_seen === 'string' ? raw.last_seen : null,
    occurrences: figure('occurrences'),
    users: figure('users'),
    sessions: figure('sessions'),
    volume: volumeOf(raw),
  }
}

/** One of the latest events as the issue's answer lists them. */
export interface IssueEvent {
  uuid: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
}

/** The latest events of the issue's answer (newest first), whatever else it holds. */
export function eventsOf(raw: Record<string, any>): IssueEvent[] {
  const list: unknown[] = Array.isArray(raw.events) ? raw.events : []
  return list
    .filter((e): e is Record<string, any> => Boolean(e) && typeof e === 'object')
    .map((e) => ({ uuid: text(e.uuid), distinct_id: text(e.distinct_id), timestamp: text(e.timestamp), properties: e.properties && typeof e.properties === 'object' ? e.properties : {} }))
}

export interface Frame {
  fn: string
  file: string
  line: number | null
  column: number | null
  inApp: boolean
}

export interface ExceptionEntry {
  type: string
  value: string
  handled: boolean | null
  /** innermost (where it was thrown) first */
  frames: Frame[]
}

/** Frames shown of one exception at most; a stack deeper than this says how many are left out. */
export const MAX_FRAMES = 200

function position(value: unknown): number | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() ? Number(value) : NaN
  return Number.isFinite(n) ? n : null
}

export function frameOf(raw: unknown): Frame | null {
  if (!raw || typeof raw !== 'object') return null
  const f = raw as Record<string, unknown>
  return {
    fn: text(f.resolved_name ?? f.function ?? f.mangled_name) || '?',
    file: text(f.source ?? f.filename ?? f.abs_path ?? f.module),
    line: position(f.line ?? f.lineno),
    column: position(f.column ?? f.colno),
    inApp: f.in_app === true,
  }
}

/** A JSON property the store may give back as text. */
function parsed(value: unknown): unknown {
  if (typeof value !== 'string') return value
  try {
    return JSON.parse(value)
  } catch {
    return null
  }
}

/**
 * An event's exceptions, from its properties. posthog-js lists frames as Sentry does, outermost first; they are
 * turned around so that where it was thrown comes first.
 */
export function exceptionsOf(properties: Record<string, unknown>): { exceptions: ExceptionEntry[]; framesLeftOut: number } {
  let framesLeftOut = 0
  const list = parsed(properties.$exception_list)
  const entries: ExceptionEntry[] = []
  if (Array.isArray(list)) {
    for (const item of list.slice(0, 20)) {
      if (!item || typeof item !== 'object') continue
      const e = item as Record<string, any>
      const rawFrames: unknown[] = Array.isArray(e.stacktrace?.frames) ? e.stacktrace.frames : []
      const frames = rawFrames.map(frameOf).filter((f): f is Frame => f !== null).reverse()
      framesLeftOut += Math.max(0, frames.length - MAX_FRAMES)
      entries.push({ type: text(e.type) || 'Error', value: text(e.value), handled: typeof e.mechanism?.handled === 'boolean' ? e.mechanism.handled : null, frames: frames.slice(0, MAX_FRAMES) })
    }
  } else if (properties.$exception_type !== undefined || properties.$exception_message !== undefined) {
    const stack = parsed(properties.$exception_stack_trace_raw)
    const frames = (Array.isArray(stack) ? stack : []).map(frameOf).filter((f): f is Frame => f !== null).reverse()
    framesLeftOut += Math.max(0, frames.length - MAX_FRAMES)
    entries.push({ type: text(properties.$exception_type) || 'Error', value: text(properties.$exception_message), handled: null, frames: frames.slice(0, MAX_FRAMES) })
  }
  return { exceptions: entries, framesLeftOut }
}

/** "file:12:5", or the file alone when the position is unknown. */
export function frameWhere(frame: Frame): string {
  if (frame.line === null) return frame.file
  return `${frame.file}:${frame.line}${frame.column === null ? '' : `:${frame.column}`}`
}

/** The sparkline's points, in a width × height box (the highest day at the top; all zero: a flat line). */
export function sparklinePoints(volume: number[], width: number, height: number): string {
  if (volume.length === 0) return ''
  const max = Math.max(1, ...volume)
  const step = volume.length > 1 ? width / (volume.length - 1) : 0
  return volume.map((v, i) => `${Math.round(i * step * 10) / 10},${Math.round((height - (v / max) * height) * 10) / 10}`).join(' ')
}

/** Issues merged in one request (the API's bound: the merged ones besides the one they go into). */
export const MAX_MERGED = 100

/** A selection with `id` added at its end, or taken out: the order says which issue the others are merged into. */
export function toggled(selected: string[], id: string): string[] {
  if (selected.includes(id)) return selected.filter((s) => s !== id)
  return selected.length > MAX_MERGED ? selected : [...selected, id]
}
