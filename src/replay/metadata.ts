// What a block of rrweb events says about its session, PostHog's rules (its ingester's cut-down segmenter):
// clicks are mouse interactions of type Click, DblClick or TouchEnd; keypresses are Input events; activity is any
// user interaction (incremental sources 1–7 and 12), and the time between two activities counts as active when they
// are at most 5 s apart; console counts come from the rrweb/console@1 plugin. A block's JSON lines are
// `[windowId, event]`, the event as it came.
import { wellFormedText } from '../db/text'
import type { SnapshotBatch } from './decode'

/** Two activities further apart than this leave the time between them idle. */
export const ACTIVITY_THRESHOLD_MS = 5000

const INCREMENTAL = 3
const META = 4
const PLUGIN = 6
const MOUSE_MOVE = 1
const MOUSE_INTERACTION = 2
const INPUT = 5
const TOUCH_MOVE = 6
const ACTIVE_SOURCES = new Set([1, 2, 3, 4, 5, 6, 7, 12])
/** MouseInteractions: Click 2, DblClick 4, TouchEnd 9 */
const CLICKS = new Set([2, 4, 9])
const MAX_URL_CHARS = 2048
/**
 * Timestamps a block is timed by: from the epoch to 2100. Outside it a client's (or a forger's) number is no time:
 * 1e300 made a start_time of null in every answer, and ClickHouse refused the block's row (its Int64 column, its
 * month partition), which held every later recording back. Such an event is kept, timed by its neighbours.
 */
export const MAX_TIMESTAMP_MS = Date.UTC(2100, 0, 1)
/**
 * How far past its receipt a block may be timed: later times are read as this. Retention removes a recording once
 * its last event is old enough, so one timed in 2099 would have been kept (and listed first) for ever.
 */
export const MAX_CLOCK_AHEAD_MS = 86_400_000

export interface BlockSummary {
  firstTimestamp: number
  lastTimestamp: number
  firstUrl: string | null
  clickCount: number
  keypressCount: number
  mouseActivityCount: number
  /** active time within the block, and its last activity (to join it to the next block's first) */
  activeMs: number
  firstActivity: number | null
  lastActivity: number | null
  consoleLogCount: number
  consoleWarnCount: number
  consoleErrorCount: number
  eventCount: number
  /** bytes of its JSON lines */
  size: number
}

export interface Block {
  sessionId: string
  windowId: string
  distinctId: string
  source: string
  library: string | null
  /** `[windowId, event]` JSON lines, each ending with a newline */
  lines: string
  summary: BlockSummary
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

function timestampOf(e: Record<string, unknown>, latest: number): number | null {
  const t = e.timestamp
  return typeof t === 'number' && t >= 0 && t < MAX_TIMESTAMP_MS ? Math.min(Math.trunc(t), latest) : null
}

/**
 * The block a batch becomes (events without a numeric timestamp are kept, and timed by their neighbours); `latest`:
 * the latest time it may have (its receipt plus MAX_CLOCK_AHEAD_MS), later ones are read as it.
 */
export function blockOf(batch: SnapshotBatch, latest = MAX_TIMESTAMP_MS): Block {
  const windowJson = JSON.stringify(batch.windowId)
  const lines: string[] = []
  const s: BlockSummary = {
    firstTimestamp: Number.POSITIVE_INFINITY,
    lastTimestamp: Number.NEGATIVE_INFINITY,
    firstUrl: null,
    clickCount: 0,
    keypressCount: 0,
    mouseActivityCount: 0,
    activeMs: 0,
    firstActivity: null,
    lastActivity: null,
    consoleLogCount: 0,
    consoleWarnCount: 0,
    consoleErrorCount: 0,
    eventCount: 0,
    size: 0,
  }
  let firstUrlAt = Number.POSITIVE_INFINITY
  const activities: number[] = []
  for (const e of batch.events) {
    const line = `[${windowJson},${JSON.stringify(e)}]\n`
    lines.push(line)
    s.size += Buffer.byteLength(line)
    s.eventCount++
    const t = timestampOf(e, latest)
    if (t !== null) {
      if (t < s.firstTimestamp) s.firstTimestamp = t
      if (t > s.lastTimestamp) s.lastTimestamp = t
    }
    const data = isObject(e.data) ? e.data : null
    if (e.type === META && data && typeof data.href === 'string' && (t ?? 0) < firstUrlAt) {
      firstUrlAt = t ?? 0
      // well formed: a lone surrogate (sent, or left by the cut) made ClickHouse refuse the block, holding back the rest
      s.firstUrl = wellFormedText(data.href.slice(0, MAX_URL_CHARS))
    } else if (e.type === INCREMENTAL && data) {
      const source = data.source
      if (typeof source !== 'number') continue
      if (source === MOUSE_INTERACTION && CLICKS.has(data.type as number)) s.clickCount++
      if (source === INPUT) s.keypressCount++
      if (source === MOUSE_MOVE || source === MOUSE_INTERACTION || source === TOUCH_MOVE) s.mouseActivityCount++
      if (ACTIVE_SOURCES.has(source) && t !== null) activities.push(t)
    } else if (e.type === PLUGIN && data && data.plugin === 'rrweb/console@1') {
      const level = isObject(data.payload) ? data.payload.level : null
      if (level === 'error') s.consoleErrorCount++
      else if (level === 'warn') s.consoleWarnCount++
      else s.consoleLogCount++
    }
  }
  activities.sort((a, b) => a - b)
  for (let i = 1; i < activities.length; i++) {
    const gap = activities[i] - activities[i - 1]
    if (gap <= ACTIVITY_THRESHOLD_MS) s.activeMs += gap
  }
  if (activities.length > 0) {
    s.firstActivity = activities[0]
    s.lastActivity = activities[activities.length - 1]
  }
  if (!Number.isFinite(s.firstTimestamp)) s.firstTimestamp = s.lastTimestamp = 0
  return { sessionId: batch.sessionId, windowId: batch.windowId, distinctId: batch.distinctId, source: batch.source, library: batch.library, lines: lines.join(''), summary: s }
}

/**
 * The active time a block adds to its session: its own, plus the gap from the session's last activity to the
 * block's first when they are close enough (blocks arrive in order, a few seconds apart).
 */
export function activeMsJoining(previousLastActivity: number | null, block: BlockSummary): number {
  let ms = block.activeMs
  if (previousLastActivity !== null && block.firstActivity !== null) {
    const gap = block.firstActivity - previousLastActivity
    if (gap > 0 && gap <= ACTIVITY_THRESHOLD_MS) ms += gap
  }
  return ms
}
