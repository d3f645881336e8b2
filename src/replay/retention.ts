// Recordings older than their project's retention are deleted: `session_recording_retention_days` of the project
// when the projects table has it, else RECORDING_RETENTION_DAYS. Run by the flush worker on a timer.
import type { Sql } from 'postgres'
import type { Logger } from '../log'
import type { RecordingStore } from './store'

const DAY_MS = 86_400_000
/** How often expired recordings are looked for. */
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000

/** Each project's own retention in days (empty when the column does not exist yet). */
export async function projectRetentionDays(sql: Sql): Promise<Map<number, number>> {
  try {
    const rows = await sql<{ id: number; days: number | null }[]>`select id, session_recording_retention_days as days from projects`
    return new Map(rows.flatMap((r) => (r.days === null ? [] : [[Number(r.id), Number(r.days)] as [number, number]])))
  } catch (error) {
    if ((error as { code?: string }).code === '42703') return new Map() // undefined_column: no per-project setting
    throw error
  }
}

/** Delete what is past retention; how many recordings went. */
export async function expireRecordings(store: RecordingStore, days: Map<number, number>, defaultDays: number, now = Date.now()): Promise<number> {
  return store.expire((teamId) => now - (days.get(teamId) ?? defaultDays) * DAY_MS)
}

/** Expire now and then every interval; returns the stop function. */
export function startRetention(deps: { store: RecordingStore; sql: Sql; defaultDays: number; log: Logger }, intervalMs = RETENTION_INTERVAL_MS): () => void {
  let running = false
  const run = async () => {
    if (running) return
    running = true
    try {
      const expired = await expireRecordings(deps.store, await projectRetentionDays(deps.sql), deps.defaultDays)
      if (expired > 0) deps.log.info({ expired }, 'session recordings past their retention deleted')
    } catch (error) {
      deps.log.warn({ err: error }, 'session recordings: expiry failed; retried at the next interval')
    } finally {
      running = false
    }
  }
  const first = setTimeout(run, 5000)
  const timer = setInterval(run, intervalMs)
  timer.unref?.()
  first.unref?.()
  return () => {
    clearTimeout(first)
    clearInterval(timer)
  }
}
