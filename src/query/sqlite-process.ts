// A child process that runs query API statements on the embedded event store (read-only). A process, not a worker
// thread: SQLite's step loop cannot be stopped from JavaScript, and a terminated worker thread keeps computing until
// the statement ends; a process that overruns QUERY_TIMEOUT_MS is killed, and its work stops with it.
import { Database } from 'bun:sqlite'

export interface SqliteQueryRequest {
  id: number
  sql: string
  params: (string | number)[]
}
export type SqliteQueryAnswer = { id: number; rows: unknown[][] } | { id: number; error: string; code: string }

const file = process.argv[2]
let db: Database | undefined

process.on('message', (m: SqliteQueryRequest) => {
  try {
    db ??= new Database(file, { readonly: true })
    db.run('PRAGMA busy_timeout = 5000')
    const rows = db.query(m.sql).values(...m.params) as unknown[][]
    process.send!({ id: m.id, rows } satisfies SqliteQueryAnswer)
  } catch (error) {
    process.send!({ id: m.id, error: (error as Error)?.message ?? String(error), code: String((error as { code?: string })?.code ?? '') } satisfies SqliteQueryAnswer)
  }
})
// the parent going away ends this process
process.on('disconnect', () => process.exit(0))
