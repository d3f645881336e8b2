// What session recordings may cost: a session's total bytes (RECORDING_MAX_SESSION_BYTES) and a project's bytes per
// UTC day (RECORDING_MAX_PROJECT_DAILY_BYTES). Checked on the serving thread before a /s/ request is logged, so it is
// in-memory counting only: one counter per project and day, and the sessions' counts in an LRU bounded by its
// entries (the oldest sessions forgotten first: a forgotten session counts again from zero). Counts live in this
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
  private readonly sessions = new Map<string, number>()
  private readonly projects = new Map<number, { day: number; bytes: number }>()
  private readonly maxTracked: number

  constructor(
    private readonly limits: RecordingBudgetLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.maxTracked = Math.max(1, limits.maxTrackedSessions ?? DEFAULT_TRACKED_SESSIONS)
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
    const known = this.sessions.get(key) ?? 0
    // moved to the newest end: a Map iterates in insertion order, so its first key is the least recently used
    this.sessions.delete(key)
    this.sessions.set(key, known + bytes)
    while (this.sessions.size > this.maxTracked) this.sessions.delete(this.sessions.keys().next().value as string)
  }
}

const sessionKey = (projectId: number, sessionId: string) => `${projectId}\u0000${sessionId}`

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
