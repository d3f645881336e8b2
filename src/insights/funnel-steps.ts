// A funnel's counting for one person: their events of the range, in time order, become attempts through the steps.
// Pure: the runner (funnels.ts) reads the events, this decides how far each attempt got and when. docs/insights.md
// "Funnels" states the rules these functions implement.
import { addMonths } from '../lib/timezone'

export type FunnelOrder = 'ordered' | 'strict' | 'unordered'
export type WindowUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month'

/** One event of the person: which steps and which exclusions it matches (bit k: step k; bit j: exclusion j). */
export interface FunnelEvent {
  /** UTC ms */
  at: number
  steps: number
  exclusions: number
  /** the breakdown property's value on this event (null when absent or no breakdown) */
  breakdown: string | null
}

/** An exclusion voids an attempt that meets its event after reaching step `fromStep` and before reaching `toStep`. */
export interface ExclusionRule {
  fromStep: number
  toStep: number
}

export interface FunnelRules {
  order: FunnelOrder
  stepCount: number
  exclusions: readonly ExclusionRule[]
  /** the last instant (inclusive) a step may happen in for an attempt that started at `start` */
  deadline(start: number): number
}

/** How far one attempt got: `at[k]` is when it reached step k (so it reached `at.length` steps). */
export interface Attempt {
  start: number
  at: number[]
  /** first touch: the breakdown value on the attempt's first event */
  breakdown: string | null
}

const UNIT_MS: Record<Exclude<WindowUnit, 'month'>, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 }

/** The conversion window: a step counts at most `interval` units after the attempt's first step (the edge included). */
export function windowDeadline(interval: number, unit: WindowUnit): (start: number) => number {
  if (unit !== 'month') return (start) => start + interval * UNIT_MS[unit]
  // calendar months in UTC, the day clamped to the target month's length: 31 Jan + 1 month = 28/29 Feb
  return (start) => addMonths(start, interval)
}

/** Whether bit `index` of a mask is set (masks of up to 20 steps or exclusions: within 32 bits). */
export function matches(mask: number, index: number): boolean {
  return ((mask >>> index) & 1) === 1
}

/** Every attempt of one person that was not voided by an exclusion (events in time order). */
export function attemptsOf(events: readonly FunnelEvent[], rules: FunnelRules): Attempt[] {
  return rules.order === 'unordered' ? unorderedAttempts(events, rules) : orderedAttempts(events, rules)
}

/**
 * Ordered and strict: one open attempt per depth (the latest to reach each step). A step-0 event opens a new attempt
 * at depth 0; a step-k event carries the latest attempt at depth k-1 to depth k (a copy: the one at k-1 may still be
 * carried again by a later step-k event) if it is still within its window. Steps are tried from the last down so that
 * one event moves an attempt by one step at most. Strict: an event that carries no attempt ends it.
 */
function orderedAttempts(events: readonly FunnelEvent[], rules: FunnelRules): Attempt[] {
  const done: Carried[] = []
  let open: (Carried | undefined)[] = new Array(rules.stepCount)
  for (const event of events) {
    voidByExclusions(event, open, rules)
    const next: (Carried | undefined)[] = rules.order === 'strict' ? new Array(rules.stepCount) : open.slice()
    for (let k = rules.stepCount - 1; k >= 1; k--) {
      const from = open[k - 1]
      if (!matches(event.steps, k) || from === undefined || from.lineage.voided || event.at > rules.deadline(from.start)) continue
      const carried: Carried = { start: from.start, at: [...from.at, event.at], breakdown: from.breakdown, lineage: from.lineage }
      from.lineage.furthest = Math.max(from.lineage.furthest, k)
      next[k] = carried
      done.push(carried)
    }
    if (matches(event.steps, 0)) {
      const started: Carried = { start: event.at, at: [event.at], breakdown: event.breakdown, lineage: { furthest: 0, voided: false } }
      next[0] = started
      done.push(started)
    }
    open = next
  }
  return done.filter((a) => !a.lineage.voided).map(({ start, at, breakdown }) => ({ start, at, breakdown }))
}

/** An attempt and the copies carried on from it share a lineage: voided together, unless it got past the exclusion. */
interface Lineage {
  /** the furthest step any copy reached */
  furthest: number
  voided: boolean
}
interface Carried extends Attempt {
  lineage: Lineage
}

/**
 * The attempts this event voids: it matches an exclusion, within their window, after they reached its from step and
 * before any copy of them reached its to step. The whole attempt goes (its earlier steps too).
 */
function voidByExclusions(event: FunnelEvent, open: (Carried | undefined)[], rules: FunnelRules): void {
  rules.exclusions.forEach((rule, j) => {
    if (!matches(event.exclusions, j)) return
    for (let k = rule.fromStep; k < rule.toStep && k < open.length; k++) {
      const attempt = open[k]
      if (attempt === undefined || attempt.lineage.furthest >= rule.toStep || event.at > rules.deadline(attempt.start)) continue
      attempt.lineage.voided = true
    }
  })
}

/**
 * Unordered: every event of a step starts an attempt; the attempt reaches as many steps as it finds distinct steps
 * within the window from it (each step's first event at or after the start). Scanned from the last event back with
 * each step's next event at hand, so a person costs O(events × steps).
 */
function unorderedAttempts(events: readonly FunnelEvent[], rules: FunnelRules): Attempt[] {
  const { stepCount } = rules
  const nextAt = new Array<number>(stepCount).fill(Infinity)
  const exclusionTimes = rules.exclusions.map((_, j) => events.filter((e) => matches(e.exclusions, j)).map((e) => e.at))
  const attempts: Attempt[] = []
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i]
    if (event.steps === 0) continue
    for (let s = 0; s < stepCount; s++) if (matches(event.steps, s)) nextAt[s] = event.at
    const deadline = rules.deadline(event.at)
    const at = nextAt.filter((t) => t <= deadline).sort((a, b) => a - b)
    if (!unorderedVoided(at, deadline, rules, exclusionTimes)) attempts.push({ start: event.at, at, breakdown: event.breakdown })
  }
  return attempts.reverse()
}

/** Whether an exclusion event falls after the attempt reached `fromStep` and before it reached `toStep` (or its window ended). */
function unorderedVoided(at: readonly number[], deadline: number, rules: FunnelRules, exclusionTimes: readonly number[][]): boolean {
  return rules.exclusions.some((rule, j) => {
    if (at.length <= rule.fromStep) return false
    const after = at[rule.fromStep]
    const before = rule.toStep < at.length ? at[rule.toStep] : deadline + 1
    const times = exclusionTimes[j]
    const first = firstAtOrAfter(times, after)
    return first < times.length && times[first] < before
  })
}

/** The index of the first time ≥ t in an ascending list (its length when none). */
function firstAtOrAfter(times: readonly number[], t: number): number {
  let lo = 0
  let hi = times.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (times[mid] < t) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The attempt that counts for a person: the furthest, and of those the first to get there. */
export function bestAttempt(attempts: readonly Attempt[]): Attempt | null {
  let best: Attempt | null = null
  for (const a of attempts) {
    if (best === null || a.at.length > best.at.length) best = a
    else if (a.at.length === best.at.length) {
      const [end, bestEnd] = [a.at[a.at.length - 1], best.at[best.at.length - 1]]
      if (end < bestEnd || (end === bestEnd && a.start < best.start)) best = a
    }
  }
  return best
}

/** Seconds from step `from` to step `to` of an attempt that reached `to` (null when it did not). */
export function secondsBetween(attempt: Attempt, from: number, to: number): number | null {
  return attempt.at.length > to ? (attempt.at[to] - attempt.at[from]) / 1000 : null
}

/** The middle of the values (the mean of the two middle ones for an even count); null when there are none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length
}

/**
 * The time-to-convert histogram: `binCount` bins (by default the cube root of the number of persons, 1 to 60) of
 * equal whole-second width from the fastest time, as `[bin start, persons]`, plus the empty bin after the last.
 */
export function histogram(seconds: readonly number[], binCount?: number | null): [number, number][] {
  if (seconds.length === 0) return []
  let min = Infinity
  let max = -Infinity
  for (const s of seconds) {
    if (s < min) min = s
    if (s > max) max = s
  }
  const count = binCount ?? Math.min(60, Math.max(1, Math.ceil(Math.cbrt(seconds.length))))
  const from = Math.floor(min)
  const width = Math.max(1, Math.ceil((max - from) / count))
  const bins: [number, number][] = Array.from({ length: count + 1 }, (_, i) => [from + i * width, 0])
  for (const s of seconds) bins[Math.min(count, Math.floor((s - from) / width))][1]++
  return bins
}
