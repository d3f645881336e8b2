// A thread that copies a SQLite file with `VACUUM INTO` (one read transaction: a consistent state of the file while
// its writer keeps writing) and counts the copy, so the thread serving capture never runs the copy itself.
import { Database } from 'bun:sqlite'

declare const self: Worker

export interface SqliteCopyRequest {
  from: string
  to: string
  /** count events per team in the copy (the event store) */
  countEvents: boolean
  /** count recorded sessions per team in the copy (the recordings' store) */
  countRecordings?: boolean
}
export type SqliteCopyAnswer =
  | { ok: true; migrations: string[]; eventsByProject: Record<string, number>; recordingsByProject: Record<string, number> }
  | { ok: false; message: string; code?: string }

self.onmessage = (event: MessageEvent<SqliteCopyRequest>) => {
  const { from, to, countEvents, countRecordings } = event.data
  try {
    const source = new Database(from, { readonly: true })
    try {
      source.run('PRAGMA busy_timeout = 10000')
      source.query('VACUUM INTO ?').run(to)
    } finally {
      source.close()
    }
    const copy = new Database(to, { readonly: true })
    try {
      const migrations = countEvents ? (copy.query('SELECT version FROM schema_migrations ORDER BY version').all() as { version: string }[]).map((r) => r.version) : []
      const eventsByProject: Record<string, number> = {}
      if (countEvents) {
        for (const r of copy.query('SELECT team_id, count(*) AS n FROM events GROUP BY team_id').all() as { team_id: number; n: number }[]) eventsByProject[String(r.team_id)] = r.n
      }
      const recordingsByProject: Record<string, number> = {}
      if (countRecordings) {
        for (const r of copy.query('SELECT team_id, count(*) AS n FROM recording_sessions GROUP BY team_id').all() as { team_id: number; n: number }[]) recordingsByProject[String(r.team_id)] = r.n
      }
      self.postMessage({ ok: true, migrations, eventsByProject, recordingsByProject } satisfies SqliteCopyAnswer)
    } finally {
      copy.close()
    }
  } catch (error) {
    const e = error as { message?: string; code?: string }
    self.postMessage({ ok: false, message: e?.message ?? String(error), code: e?.code } satisfies SqliteCopyAnswer)
  }
}
