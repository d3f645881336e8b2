// What session recordings may cost: a session's total bytes (RECORDING_MAX_SESSION_BYTES) and a project's bytes per
// UTC day (RECORDING_MAX_PROJECT_DAILY_BYTES). Checked on the serving thread before a /s/ request is logged, so it is
// in-memory counting only: one counter per project and day, and the sessions' counts bounded in entries, the least
// recently used forgotten first (a forgotten session counts again from zero). Counts live in this
// process: a restart starts them again (docs/replay.md "Budgets").

export type BudgetRefusal = 'session_bytes' | 'project_daily_bytes'

export interface RecordingBudgetLimits {
  /** a session's bytes of decoded JSON, in total; 0 = no cap */
  maxSessionBytes: number
  /** a project's bytes of decoded JSON per UTC day; 0 = no cap */
  maxProjectDailyBytes: number
  /** sessions remembered (each costs its key, ≤ 70 characters, and a number) */
  maxTrackedSessions?: number
}

/** ~10 MB of keys and counts at most. */
const DEFAULT_TRACKED_SESSIONS = 100_000
const DAY_MS = 86_400_000

/** One request's share: its project, and its decoded bytes per session. */
export interface RecordingCost {
  projectId: number
  sessions: Map<string, number>
}

export class RecordingBudget {
  private readonly sessions: BoundedCounts
  private readonly projects = new Map<number, { day: number; bytes: number }>()

  constructor(
    private readonly limits: RecordingBudgetLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.sessions = new BoundedCounts(limits.maxTrackedSessions ?? DEFAULT_TRACKED_SESSIONS)
  }

  /**
   * Take the request's bytes from the budgets, or say which budget it would pass (nothing taken then). A request
   * is refused for its sessions only when every session in it is past its cap: the others' bytes are not lost
   * with it (posthog-js sends one session per request).
   */
  take(cost: RecordingCost): BudgetRefusal | null {
    let total = 0
    for (const bytes of cost.sessions.values()) total += bytes
    const day = Math.floor(this.now() / DAY_MS)
    const project = this.projects.get(cost.projectId)
    const spentToday = project && project.day === day ? project.bytes : 0
    if (this.limits.maxProjectDailyBytes > 0 && spentToday + total > this.limits.maxProjectDailyBytes) return 'project_daily_bytes'
    if (this.limits.maxSessionBytes > 0 && cost.sessions.size > 0) {
      let allPast = true
      for (const [sessionId, bytes] of cost.sessions) {
        if ((this.sessions.get(sessionKey(cost.projectId, sessionId)) ?? 0) + bytes <= this.limits.maxSessionBytes) allPast = false
      }
      if (allPast) {
        // still sending: kept among the remembered, so that it stays refused
        for (const sessionId of cost.sessions.keys()) this.addToSession(sessionKey(cost.projectId, sessionId), 0)
        return 'session_bytes'
      }
    }
    this.projects.set(cost.projectId, { day, bytes: spentToday + total })
    if (this.limits.maxSessionBytes > 0) for (const [sessionId, bytes] of cost.sessions) this.addToSession(sessionKey(cost.projectId, sessionId), bytes)
    return null
  }

  /** Give back what take() took, when the request was not logged after all (the log refused it). */
  giveBack(cost: RecordingCost): void {
    let total = 0
    for (const bytes of cost.sessions.values()) total += bytes
    const project = this.projects.get(cost.projectId)
    if (project) project.bytes = Math.max(0, project.bytes - total)
    for (const [sessionId, bytes] of cost.sessions) {
      const key = sessionKey(cost.projectId, sessionId)
      const known = this.sessions.get(key)
      if (known !== undefined) this.sessions.set(key, Math.max(0, known - bytes))
    }
  }

  /** Sessions remembered now (for tests and the docs' bound). */
  get trackedSessions(): number {
    return this.sessions.size
  }

  private addToSession(key: string, bytes: number): void {
    this.sessions.set(key, (this.sessions.get(key) ?? 0) + bytes)
  }
}

const sessionKey = (projectId: number, sessionId: string) => `${projectId}\u0000${sessionId}`

/**
 * Counts by key, at most `max` keys, the least recently used forgotten first: two generations (a key read from the
 * older one moves to the newer; when the newer holds max/2 the older is dropped whole). O(1) per use, where evicting
 * a Map's first key one at a time costs a walk over its deleted entries (70 µs a use at 100,000 sessions, measured).
 */
export class BoundedCounts {
  private current = new Map<string, number>()
  private previous = new Map<string, number>()
  private readonly half: number

  constructor(max: number) {
    this.half = Math.max(1, Math.floor(max / 2))
  }

  get(key: string): number | undefined {
    const now = this.current.get(key)
    if (now !== undefined) return now
    const old = this.previous.get(key)
    if (old !== undefined) this.set(key, old)
    return old
  }

  delete(key: string): void {
    this.current.delete(key)
    this.previous.delete(key)
  }

  has(key: string): boolean {
    return this.current.has(key) || this.previous.has(key)
  }

  set(key: string, value: number): void {
    this.previous.delete(key)
    this.current.set(key, value)
    if (this.current.size >= this.half) {
      this.previous = this.current
      this.current = new Map()
    }
  }

  get size(): number {
    return this.current.size + this.previous.size
  }
}

/** A request's decoded bytes shared among its sessions by their events (exact for one session, the usual case). */
export function costOf(projectId: number, decodedSize: number, batches: { sessionId: string; events: unknown[] }[]): RecordingCost {
  const sessions = new Map<string, number>()
  let events = 0
  for (const b of batches) events += b.events.length
  for (const b of batches) {
    const share = events > 0 ? Math.ceil((decodedSize * b.events.length) / events) : 0
    sessions.set(b.sessionId, (sessions.get(b.sessionId) ?? 0) + share)
  }
  return { projectId, sessions }
}
